// Syscall actions: each performs, for real, a behaviour that a rule of the built-in syscall set
// (rules/syscall) detects, harmlessly: anything written goes to the run's temporary directory (or
// one made for the purpose under /dev/shm, removed at once), sensitive files are only read, the
// hard link to /etc/shadow is attempted where it must fail, and the only packet that leaves is one
// TCP SYN to a documentation address (RFC 5737). Rules that need a login session are listed with
// the reason they cannot work; the container-only ones are in container-actions.ts.
import { chmodSync, copyFileSync, linkSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { join, relative } from 'node:path';
import { first, isRoot, mountOptions, mustRun, needs, perlSyscallsUnavailable, runProgram, syscallNumbers, which } from './exec.js';
import { asNobody, linkAs, nobodyUnavailable } from './isolate.js';
import type { Action } from './types.js';

/** TEST-NET-2 (RFC 5737): public-looking, never routed; only ever put on a private namespace's loopback here. */
const PRIVATE_NET_ADDR = '198.51.100.7';

const rootAnd = (more?: () => string | undefined) => () => (isRoot() ? more?.() : 'needs root (to open /etc/shadow)');

/** A copy of perl named `httpd` in the temporary directory: a web server, as the rules see it (proc.name is the executable's name). */
function fakeHttpd(tmp: string): string {
  const path = join(tmp, 'httpd');
  symlinkSync(which('perl')!, path);
  return path;
}

/** Every syscall action. */
export const SYSCALL_ACTIONS: Action[] = [
  {
    name: 'syscall.DirectoryTraversalMonitoredFileRead',
    source: 'syscall',
    rule: 'Directory traversal monitored file read',
    description: 'cat /etc/passwd through a path with ../ segments',
    unavailable: needs('cat'),
    run: ({ tmp }) => mustRun(which('cat')!, [`${tmp}/${relative(tmp, '/etc/passwd')}`]),
  },
  {
    name: 'syscall.ReadSensitiveFileTrustedAfterStartup',
    source: 'syscall',
    rule: 'Read sensitive file trusted after startup',
    description: 'a process named httpd reads /etc/shadow 6 s after it started',
    unavailable: rootAnd(needs('perl')),
    run: ({ tmp }) => mustRun(fakeHttpd(tmp), ['-e', 'sleep 6; open(my $f, "<", "/etc/shadow") or die "open: $!"'], { timeoutMs: 20_000 }),
  },
  {
    name: 'syscall.ReadSensitiveFileUntrusted',
    source: 'syscall',
    rule: 'Read sensitive file untrusted',
    description: 'cat /etc/shadow',
    unavailable: rootAnd(needs('cat')),
    run: () => mustRun(which('cat')!, ['/etc/shadow']),
  },
  {
    name: 'syscall.RunShellUntrusted',
    source: 'syscall',
    rule: 'Run shell untrusted',
    description: 'a process named httpd spawns sh -c',
    unavailable: needs('perl', 'sh'),
    run: ({ tmp }) => mustRun(fakeHttpd(tmp), ['-e', `exit(system("${which('sh')}", "-c", "echo rae-event-generator > /dev/null") == 0 ? 0 : 1)`]),
  },
  {
    name: 'syscall.SearchPrivateKeysOrPasswords',
    source: 'syscall',
    rule: 'Search Private Keys or Passwords',
    description: 'find <tmp> -name id_rsa',
    unavailable: needs('find'),
    run: ({ tmp }) => mustRun(which('find')!, [tmp, '-name', 'id_rsa']),
  },
  {
    name: 'syscall.ClearLogActivities',
    source: 'syscall',
    rule: 'Clear Log Activities',
    description: 'truncate a file named auth.log (in <tmp>) with O_TRUNC',
    run: async ({ tmp }) => {
      const log = join(tmp, 'auth.log');
      writeFileSync(log, 'Nov 23 01:00:00 host sshd[1]: Accepted publickey for root\n');
      closeSync(openSync(log, 'w')); // O_WRONLY|O_CREAT|O_TRUNC
    },
  },
  {
    name: 'syscall.RemoveBulkDataFromDisk',
    source: 'syscall',
    rule: 'Remove Bulk Data from Disk',
    description: 'shred -u a file in <tmp>',
    unavailable: needs('shred'),
    run: async ({ tmp }) => {
      const f = join(tmp, 'data.bin');
      writeFileSync(f, Buffer.alloc(4096, 1));
      await mustRun(which('shred')!, ['-u', f]);
    },
  },
  {
    name: 'syscall.CreateSymlinkOverSensitiveFiles',
    source: 'syscall',
    rule: 'Create Symlink Over Sensitive Files',
    description: 'symlink <tmp>/etc-link -> /etc',
    run: async ({ tmp }) => symlinkSync('/etc', join(tmp, 'etc-link')),
  },
  {
    name: 'syscall.CreateHardlinkOverSensitiveFiles',
    source: 'syscall',
    rule: 'Create Hardlink Over Sensitive Files',
    description: 'link /etc/shadow into a missing directory of <tmp> (fails with ENOENT: nothing is created)',
    run: async ({ tmp }) => {
      try {
        linkSync('/etc/shadow', join(tmp, 'missing', 'shadow'));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        return;
      }
      throw new Error('the link was created'); // cannot happen: the directory does not exist
    },
  },
  {
    name: 'syscall.PtraceAttachedToProcess',
    source: 'syscall',
    rule: 'PTRACE attached to process',
    description: 'perl forks a child, PTRACE_ATTACHes to it, detaches and ends it',
    unavailable: perlSyscallsUnavailable,
    run: () => {
      const nr = syscallNumbers()!.ptrace;
      // PTRACE_ATTACH (16), wait for the attach stop, PTRACE_DETACH (17), then end the child.
      const script = `my $p = fork(); if ($p == 0) { sleep 10; exit 0 } my $r = syscall(${nr}, 16, $p, 0, 0); if ($r == 0) { waitpid($p, 0); syscall(${nr}, 17, $p, 0, 0) } kill 'KILL', $p; waitpid($p, 0); exit($r == 0 ? 0 : 1)`;
      return mustRun(which('perl')!, ['-e', script]);
    },
  },
  {
    name: 'syscall.PtraceAntiDebugAttempt',
    source: 'syscall',
    rule: 'PTRACE anti-debug attempt',
    description: 'perl calls ptrace(PTRACE_TRACEME)',
    unavailable: perlSyscallsUnavailable,
    run: () => mustRun(which('perl')!, ['-e', `exit(syscall(${syscallNumbers()!.ptrace}, 0, 0, 0, 0) == 0 ? 0 : 1)`]),
  },
  {
    name: 'syscall.FindAwsCredentials',
    source: 'syscall',
    rule: 'Find AWS Credentials',
    description: 'find <tmp> -path */.aws/credentials',
    unavailable: needs('find'),
    run: ({ tmp }) => mustRun(which('find')!, [tmp, '-path', '*/.aws/credentials']),
  },
  {
    name: 'syscall.ExecutionFromDevShm',
    source: 'syscall',
    rule: 'Execution from /dev/shm',
    description: 'run a copy of true from a directory under /dev/shm (removed at once)',
    unavailable: first(needs('true'), () => {
      const opts = mountOptions('/dev/shm');
      if (!opts) return 'needs /dev/shm mounted';
      return opts.includes('noexec') ? '/dev/shm is mounted noexec' : undefined;
    }),
    run: async () => {
      const dir = mkdtempSync('/dev/shm/rae-event-generator-');
      try {
        const bin = join(dir, 'true');
        copyFileSync(which('true')!, bin);
        chmodSync(bin, 0o755);
        await mustRun(bin, []);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: 'syscall.FilelessExecutionViaMemfdCreate',
    source: 'syscall',
    rule: 'Fileless execution via memfd_create',
    description: 'perl copies true into a memfd and executes it from there',
    unavailable: first(perlSyscallsUnavailable, needs('true')),
    run: () => {
      const script = [
        `my $name = "rae-event-generator"; my $fd = syscall(${syscallNumbers()!.memfd_create}, $name, 0); die "memfd_create: $!" if $fd < 0;`,
        `open(my $in, "<:raw", "${which('true')}") or die "open: $!"; local $/; my $bin = <$in>;`,
        'open(my $out, ">&=", $fd) or die "fdopen: $!"; binmode $out; syswrite($out, $bin) == length($bin) or die "write: $!";',
        'exec {"/proc/self/fd/$fd"} "rae-memfd" or die "exec: $!";',
      ].join(' ');
      return mustRun(which('perl')!, ['-e', script]);
    },
  },
  {
    name: 'syscall.DisallowedSshConnectionNonStandardPort',
    source: 'syscall',
    rule: 'Disallowed SSH Connection Non Standard Port',
    description: `ssh to port 443 of ${PRIVATE_NET_ADDR} inside a private network namespace (the address lives on that namespace's loopback; nothing leaves the machine)`,
    unavailable: first(needs('ssh', 'unshare', 'ip', 'perl'), () => (isRoot() ? undefined : 'needs root (to create a network namespace)')),
    run: async () => {
      // The rule wants a TCP connect to a public, non-loopback address. A fresh network namespace
      // gets that address on its own loopback and a listener, so the connect is real and local:
      // no packet reaches any network. ssh then times out waiting for a banner (exit 255).
      const listener = `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "${PRIVATE_NET_ADDR}", LocalPort => 443, Listen => 1, ReuseAddr => 1) or die "listen: $!"; $c = $s->accept; sleep 2'`;
      const ssh = [
        which('ssh')!,
        '-F',
        '/dev/null',
        '-o',
        'BatchMode=yes',
        '-o',
        'ConnectTimeout=1',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-p',
        '443',
        `rae-event-generator@${PRIVATE_NET_ADDR}`,
        'true',
      ].join(' ');
      const script = `ip link set lo up && ip addr add ${PRIVATE_NET_ADDR}/32 dev lo && { ${listener} & sleep 0.3; ${ssh}; wait; }`;
      await runProgram(which('unshare')!, ['--net', 'sh', '-c', script], { timeoutMs: 15_000 });
    },
  },
  {
    name: 'syscall.SystemUserInteractive',
    source: 'syscall',
    rule: 'System user interactive',
    description: 'nobody (a system user) runs a program named login (true under that name, in <tmp>), as upstream runs /bin/login as daemon',
    unavailable: first(nobodyUnavailable, needs('true')),
    run: ({ tmp }) => {
      // nobody needs search permission down to the program (the run's directory is 0711, runActions)
      chmodSync(tmp, 0o711);
      const [file, ...args] = asNobody([linkAs(tmp, 'true', 'login')]);
      return mustRun(file!, args);
    },
  },
];
