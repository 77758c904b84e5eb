# One process of a suite test's process chain (host/testing/suite/perform.ts writes the plan).
# Read from stdin by the perl embedded in the leaf program (leaf.c), the program of every process
# of the chain, run through a link named as the test's process (exePath, name), so proc.name and
# proc.exepath are the test's, and argv exactly the test's.
# Consumes: the plan file named by RAE_SUITE_PLAN (JSON), this process's index in RAE_SUITE_STAGE.
# Produces: the next process of the chain (forked, waited for), or, in the leaf, the before
# script, the resources, the steps and the after script, with a JSON report written to
# plan.report: {"ok": true} or {"ok": false, "error": "..."}.
# Why perl: Node cannot make raw syscalls (open with given flags, linkat, dup3, ...); perl's
# `syscall` can, and perl is on every Debian system (host/generator/exec.ts does the same).
use strict;
use warnings;
use JSON::PP;
use POSIX ();
use Socket;
require 'syscall.ph';

my $plan = do {
  open(my $f, '<', $ENV{RAE_SUITE_PLAN}) or die "leaf: cannot read the plan $ENV{RAE_SUITE_PLAN}: $!";
  local $/;
  decode_json(<$f>);
};
my $stage = $ENV{RAE_SUITE_STAGE} // 0;
my $chain = $plan->{chain};

sub report {
  my ($r) = @_;
  open(my $f, '>', $plan->{report}) or die "leaf: cannot write the report: $!";
  print $f encode_json($r);
  close($f);
}

# Makes a process's executable in a container (the plan's `make`): a hard link of the program at
# `real`, or a copy where the link cannot be made (another file system: the copy lands in the
# container's writable layer), and the symlink `path` when the test names the process. Returns
# the closure that removes them.
sub make_exe {
  my ($p) = @_;
  my ($from, $real, $path) = ($p->{make}{from}, $p->{make}{real}, $p->{path});
  my @dirs = made_dirs($real);
  chmod(0755, $_) for @dirs;
  unless (link($from, $real)) {
    require File::Copy;
    File::Copy::copy($from, $real) or die "copy $from to $real: $!\n";
    chmod(0755, $real) or die "chmod $real: $!\n";
  }
  if ($path ne $real) { symlink($real, $path) or die "symlink $path: $!\n"; }
  return sub { unlink($path) if $path ne $real; unlink($real); rmdir($_) for reverse @dirs; };
}

# `+cap,+cap...` for every capability of this process's bounding set (perform.ts PARENT_BOUNDING).
sub bounding_caps {
  open(my $f, '<', '/proc/self/status') or die "leaf: /proc/self/status: $!";
  my ($hex) = join('', <$f>) =~ /^CapBnd:\s*([0-9a-f]+)$/m;
  no warnings 'portable';
  my $bits = hex($hex // '0');
  my @names = @{ $plan->{capNames} };
  return join(',', map { "+$names[$_]" } grep { ($bits >> $_) & 1 } 0 .. $#names);
}

# Starts chain element $i (a process of the chain or a process resource) as a child; returns its
# pid once the child has executed its program (or ended), as Go's os.StartProcess returns for
# upstream's runner: a resource destroyed right after it is made (a test without steps) has run.
sub spawn_process {
  my ($p, $stageEnv) = @_;
  # perl makes the pipe close-on-exec: its write end closes when the child executes its program
  pipe(my $execRd, my $execWr) or die "pipe: $!";
  my $pid = fork();
  die "fork: $!" unless defined $pid;
  if ($pid) {
    close($execWr);
    my $eof = <$execRd>;
    close($execRd);
    return $pid;
  }
  close($execRd);
  open(STDIN, '<', $plan->{script}) or POSIX::_exit(120);
  %ENV = %{ $p->{env} };
  $ENV{RAE_SUITE_STAGE} = $stageEnv;
  # the program reads leaf.pl from stdin: argv is the test's own, argv[0] then the arguments
  my @argv = ($p->{argv0}, @{ $p->{args} });
  # setpriv sets the user and capabilities, then perl (TRAMPOLINE) starts the process with its argv[0]
  if ($p->{setpriv}) {
    my @opts = map { (my $o = $_) =~ s/\+\@bounding/bounding_caps()/e; $o } @{ $p->{setpriv} };
    exec { '/usr/bin/setpriv' } 'setpriv', @opts, '--', @{ $plan->{trampoline} }, $p->{path}, @argv;
  }
  exec_fileless($p->{path}, $p->{memfd}, @argv) if defined $p->{memfd};
  exec { $p->{path} } @argv;
  POSIX::_exit(122);
}

# A fileless process (a process resource's fileLess, as upstream's runner): the program at $path
# copied into a memfd named $name (memfd_create, no close-on-exec) and executed from there through
# /proc/self/fd/N, as glibc's fexecve does where execveat is missing: the kernel runs the memfd's
# file, whose path is /memfd:NAME (deleted), so proc.exepath is memfd:NAME and
# proc.is_exe_from_memfd holds. Returns only on a failure (the child then exits 123).
sub exec_fileless {
  my ($path, $name, @argv) = @_;
  my $fd = syscall(&SYS_memfd_create, $name, 0);
  POSIX::_exit(123) if $fd < 0;
  open(my $in, '<:raw', $path) or POSIX::_exit(123);
  my $bin = do { local $/; <$in> };
  close($in);
  for (my $off = 0; $off < length($bin);) {
    my $n = syscall(&SYS_write, $fd, substr($bin, $off), length($bin) - $off);
    POSIX::_exit(123) if $n <= 0;
    $off += $n;
  }
  no warnings 'exec';
  exec { "/proc/self/fd/$fd" } @argv;
  POSIX::_exit(123);
}

if ($stage eq 'resource') {
  # a process resource: stays until killed (or 60 s)
  sleep 60;
  exit 0;
}

if ($stage < $#$chain) {
  my $next = $chain->[$stage + 1];
  my $unmake = $next->{make} ? eval { make_exe($next) } : sub { };
  unless ($unmake) {
    chomp(my $why = $@);
    report({ ok => JSON::PP::false, error => "process $next->{path}: $why" });
    exit 1;
  }
  my $pid = spawn_process($next, $stage + 1);
  waitpid($pid, 0);
  my $code = $? >> 8;
  $unmake->();
  exit($code);
}

my %bound;    # name.path -> value
my @undo;     # closures run at the end, last first
my %C = %{ $plan->{constants} };

sub num {
  my ($v) = @_;
  return 0 + $v if $v =~ /^-?\d+$/ && $v !~ /^0\d/;
  return oct($v) if $v =~ /^0[0-7]+$/;
  my $n = 0;
  for my $part (split /\|/, $v) {
    $part =~ s/^\s+|\s+$//g;
    if ($part =~ /^-?\d+$/) { $n |= $part; next; }
    die "unknown constant '$part'\n" unless exists $C{$part};
    $n |= $C{$part};
  }
  return $n;
}

sub arg {
  my ($v) = @_;
  return $v unless defined $v && !ref $v;
  if ($v =~ /^\$\{\s*([^}\s]+)\s*\}$/) {
    die "binding \${$1}: nothing of that name was made before\n" unless exists $bound{$1};
    return $bound{$1};
  }
  return $v;
}

sub sockaddr_of {
  my ($addr, $family) = @_;
  # the captures copied first: the calls below run regexes of their own
  if ($addr =~ /^\[(.*)\]:(\d+)$/) { my ($h, $p) = ($1, $2); return pack_sockaddr_in6($p, Socket::inet_pton(AF_INET6, $h)); }
  if ($addr =~ /^(.*):(\d+)$/) { my ($h, $p) = ($1, $2); return pack_sockaddr_in($p, inet_aton($h)); }
  die "address '$addr': expected HOST:PORT or [HOST]:PORT\n";
}

sub raw {
  my ($name, @a) = @_;
  local $! = 0;
  my $nr = shift @a;
  # every number as a pure number: perl's syscall passes a string (even "3") as a pointer
  my $r = syscall($nr, map { ref $_ ? $$_ : $_ } @a);
  return ($r, $r == -1 ? 0 + $! : 0);
}

my %fhs;    # keep perl handles alive
my %dirOf;  # directory fd -> its path, to undo what a step made relative to it
sub make_resource {
  my ($r) = @_;
  my $n = $r->{name};
  if ($r->{type} eq 'fd') {
    my $st = $r->{subtype} // '';
    if ($st eq 'file') {
      my $p = $r->{filePath};
      my $created = !-e $p;
      my @dirs = made_dirs($p);
      my $fd = syscall(&SYS_open, $p, 2 | ($created ? 0100 : 0), 0644);
      die "fd $n: open $p: $!\n" if $fd < 0;
      $bound{"$n.fd"} = $fd;
      push @undo, sub { POSIX::close($fd); unlink($p) if $created; rmdir($_) for reverse @dirs; };
    } elsif ($st eq 'directory') {
      my $p = $r->{dirPath};
      my @dirs = made_dirs("$p/x");
      my $fd = syscall(&SYS_open, $p, 0200000, 0);
      die "fd $n: open $p: $!\n" if $fd < 0;
      $bound{"$n.fd"} = $fd;
      $dirOf{$fd} = $p;
      push @undo, sub { POSIX::close($fd); rmdir($_) for reverse @dirs; };
    } elsif ($st eq 'pipe') {
      pipe(my $rd, my $wr) or die "fd $n: pipe: $!\n";
      $fhs{$n} = [$rd, $wr];
      $bound{"$n.readFd"} = fileno($rd);
      $bound{"$n.writeFd"} = fileno($wr);
    } elsif ($st eq 'memfd') {
      my $fd = syscall(&SYS_memfd_create, $r->{fileName}, 0);
      die "fd $n: memfd_create: $!\n" if $fd < 0;
      $bound{"$n.fd"} = $fd;
      push @undo, sub { POSIX::close($fd) };
    } else {
      my %how = (
        event => sub { syscall(&SYS_eventfd2, 0, 0) },
        signalfd => sub { my $mask = pack('Q', 0); syscall(&SYS_signalfd4, -1, $mask, 8, 0) },
        eventpoll => sub { syscall(&SYS_epoll_create1, 0) },
        inotify => sub { syscall(&SYS_inotify_init1, 0) },
      );
      die "fd $n: unknown subtype '$st'\n" unless $how{$st};
      my $fd = $how{$st}->();
      die "fd $n: $st: $!\n" if $fd < 0;
      $bound{"$n.fd"} = $fd;
      push @undo, sub { POSIX::close($fd) };
    }
  } elsif ($r->{type} eq 'process') {
    my $pid = spawn_process($r->{process}, 'resource');
    $bound{"$n.pid"} = $pid;
    push @undo, sub { kill 'KILL', $pid; waitpid($pid, 0); };
  } elsif ($r->{type} eq 'clientServer') {
    my $proto = $r->{l4Proto};
    my ($server, $client);
    if ($proto eq 'unix') {
      my $path = "$plan->{dir}/$n.sock";
      socket($server, AF_UNIX, SOCK_STREAM, 0) or die "clientServer $n: socket: $!\n";
      bind($server, pack_sockaddr_un($path)) or die "clientServer $n: bind $path: $!\n";
      listen($server, 4) or die "clientServer $n: listen: $!\n";
      socket($client, AF_UNIX, SOCK_STREAM, 0) or die;
      connect($client, pack_sockaddr_un($path)) or die "clientServer $n: connect: $!\n";
    } else {
      my $fam = $proto =~ /6$/ ? AF_INET6 : AF_INET;
      my $type = $proto =~ /^tcp/ ? SOCK_STREAM : SOCK_DGRAM;
      my $sa = sockaddr_of($r->{address});
      socket($server, $fam, $type, 0) or die "clientServer $n: socket: $!\n";
      setsockopt($server, SOL_SOCKET, SO_REUSEADDR, 1);
      bind($server, $sa) or die "clientServer $n: bind $r->{address}: $!\n";
      listen($server, 4) if $type == SOCK_STREAM;
      socket($client, $fam, $type, 0) or die "clientServer $n: socket: $!\n";
      if ($type == SOCK_STREAM) { connect($client, $sa) or die "clientServer $n: connect $r->{address}: $!\n"; }
    }
    $fhs{$n} = [$server, $client];
    $bound{"$n.client.fd"} = fileno($client);
    $bound{"$n.server.fd"} = fileno($server);
  } else {
    die "resource $n: unknown type '$r->{type}'\n";
  }
}

# The directories missing on the way to $path's parent, made now (outermost first).
sub made_dirs {
  my ($path) = @_;
  my @missing;
  my $d = $path;
  while (($d =~ s{/[^/]+$}{}) && $d ne '' && !-e $d) { unshift @missing, $d; }
  for (@missing) { mkdir($_) or die "mkdir $_: $!\n"; }
  return @missing;
}

sub step {
  my ($s) = @_;
  my $n = $s->{name};
  my %a = map { $_ => arg($s->{args}{$_}) } keys %{ $s->{args} };
  my $sc = $s->{syscall};
  my ($ret, $err);
  my $cwd = -100;
  my $openPath;
  if ($sc =~ /^open/ && defined $a{pathname}) {
    my $dir = defined $a{dirFd} ? $dirOf{ $a{dirFd} } : POSIX::getcwd();
    $openPath = $a{pathname} =~ m{^/} ? $a{pathname} : defined $dir ? "$dir/$a{pathname}" : undef;
  }
  my $existed = defined $openPath && -e $openPath;
  if ($sc eq 'write' || $sc eq 'read') {
    my $buf = defined $a{buffer} ? "$a{buffer}" : '';
    my $len = defined $a{len} ? num($a{len}) : length($buf);
    $buf .= "\0" x ($len - length($buf)) if $len > length($buf);
    ($ret, $err) = raw($sc, $sc eq 'write' ? &SYS_write : &SYS_read, num($a{fd}), $buf, $len);
  } elsif ($sc eq 'open') {
    ($ret, $err) = raw($sc, &SYS_open, "$a{pathname}", num($a{flags}), num($a{mode} // 0));
  } elsif ($sc eq 'openat') {
    ($ret, $err) = raw($sc, &SYS_openat, num($a{dirFd} // $cwd), "$a{pathname}", num($a{flags}), num($a{mode} // 0));
  } elsif ($sc eq 'openat2') {
    my $h = $a{how} // {};
    my $how = pack('QQQ', num($h->{flags} // 0), num($h->{mode} // 0), num($h->{resolve} // 0));
    ($ret, $err) = raw($sc, 437, num($a{dirFd} // $cwd), "$a{pathname}", $how, 24);
  } elsif ($sc eq 'symlink') {
    ($ret, $err) = raw($sc, &SYS_symlink, "$a{target}", "$a{linkPath}");
  } elsif ($sc eq 'symlinkat') {
    ($ret, $err) = raw($sc, &SYS_symlinkat, "$a{target}", num($a{newDirFd} // $cwd), "$a{linkPath}");
  } elsif ($sc eq 'link') {
    ($ret, $err) = raw($sc, &SYS_link, "$a{oldPath}", "$a{newPath}");
  } elsif ($sc eq 'linkat') {
    ($ret, $err) = raw($sc, &SYS_linkat, num($a{oldDirFd} // $cwd), "$a{oldPath}", num($a{newDirFd} // $cwd), "$a{newPath}", num($a{flags} // 0));
  } elsif ($sc eq 'dup') {
    ($ret, $err) = raw($sc, &SYS_dup, num($a{oldFd}));
  } elsif ($sc eq 'dup2') {
    ($ret, $err) = raw($sc, &SYS_dup2, num($a{oldFd}), num($a{newFd}));
  } elsif ($sc eq 'dup3') {
    ($ret, $err) = raw($sc, &SYS_dup3, num($a{oldFd}), num($a{newFd}), num($a{flags} // 0));
  } elsif ($sc eq 'socket') {
    ($ret, $err) = raw($sc, &SYS_socket, num($a{domain}), num($a{type}), num($a{protocol}));
  } elsif ($sc eq 'connect') {
    my $sa = sockaddr_of("$a{address}");
    ($ret, $err) = raw($sc, &SYS_connect, num($a{fd}), $sa, length($sa));
  } elsif ($sc eq 'sendto') {
    my $buf = "$a{buf}";
    my $sa = sockaddr_of("$a{destAddr}");
    ($ret, $err) = raw($sc, &SYS_sendto, num($a{fd}), $buf, num($a{len} // length($buf)), num($a{flags} // 0), $sa, length($sa));
  } elsif ($sc eq 'kill') {
    ($ret, $err) = raw($sc, &SYS_kill, num($a{pid}), num($a{sig}));
  } else {
    die "step $n: syscall '$sc' is not performed by this runner (supported: write read open openat openat2 symlink symlinkat link linkat dup dup2 dup3 socket connect sendto kill)\n";
  }
  $bound{"$n.ret"} = $ret;
  $bound{"$n.$_"} = $a{$_} for grep { !ref $a{$_} } keys %a;
  # undo what a step made on the file system, unless it was there before
  for my $k (qw(linkPath newPath)) {
    my $p = $a{$k};
    next unless defined $p && $ret == 0;
    my $dir = defined $a{newDirFd} ? $dirOf{ $a{newDirFd} } : POSIX::getcwd();
    $p = "$dir/$p" if $p !~ m{^/} && defined $dir;
    push @undo, sub { unlink($p) } if $p =~ m{^/};
  }
  # a file an open step created (O_CREAT) is removed
  if (defined $openPath && $ret >= 0 && !$existed) {
    my $p = $openPath;
    my $flags = $sc eq 'openat2' ? num(($a{how} // {})->{flags} // 0) : num($a{flags} // 0);
    push @undo, sub { unlink($p) } if ($flags & 0100) && $p =~ m{^/};
  }
  push @undo, sub { POSIX::close($ret) } if $ret > 2 && $sc =~ /^(open|openat|openat2|dup|dup3|socket)$/;
  return { name => $n, syscall => $sc, ret => $ret, errno => $err };
}

my @done;
my $error;
eval {
  if (defined $plan->{before}) { system('/bin/bash', '-c', $plan->{before}) == 0 or die "before script exited with " . ($? >> 8) . "\n"; }
  make_resource($_) for @{ $plan->{resources} };
  push @done, step($_) for @{ $plan->{steps} };
  1;
} or $error = "$@";
if (defined $plan->{after}) { system('/bin/bash', '-c', $plan->{after}); }
for my $u (reverse @undo) { eval { $u->() }; }
chomp($error) if defined $error;
report({ ok => defined $error ? JSON::PP::false : JSON::PP::true, error => $error, steps => \@done });
exit 0;
