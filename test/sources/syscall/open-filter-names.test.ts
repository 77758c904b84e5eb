// The open filter's process names in the real probe (root, real kernel; probe.bpf.c proc_names,
// kept_by_name): a read-only open outside the paths is kept when the process's name as the
// engine's thread table holds it (the comm at its exec or fork, or the /proc scan's) is one of
// the rules' names, whatever its current comm, and dropped otherwise; a process the probe has no
// name for keeps every open.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { KIND } from '../../../host/abi/records.js';
import type { SyscallRecord } from '../../helpers/record-decoder.js';
import { Collector, kernelGate } from './collector.js';

/**
 * A perl process that takes commands on stdin, one a line, and answers each with "done" once it
 * has run it: `open PATH` (read-only), `name NAME` (prctl(PR_SET_NAME): its comm alone changes),
 * `fork PATH` (a child opens PATH read-only and exits; waited for); anything else does nothing.
 */
const OPENER = [
  '$| = 1;',
  'while (my $l = <STDIN>) {',
  '  chomp $l; my ($op, $arg) = split / /, $l, 2;',
  '  if ($op eq "open") { sysopen(my $f, $arg, 0) }',
  '  elsif ($op eq "name") { syscall(157, 15, $arg) }', // x86-64 prctl, PR_SET_NAME
  '  elsif ($op eq "fork") { my $p = fork; if (!$p) { sysopen(my $f, $arg, 0); exit 0 } waitpid($p, 0) }',
  '  print "done\\n";',
  '}',
].join('\n');

/** An OPENER run as `bin` (a copy of perl named as the test wants its comm). */
class Opener {
  readonly child: ChildProcess;
  private out = '';
  private exited = false;
  private waiting: (() => void) | undefined;

  constructor(bin: string) {
    this.child = spawn(bin, ['-e', OPENER], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.out += d.toString();
      this.waiting?.();
    });
    this.child.on('exit', () => {
      this.exited = true;
      this.waiting?.();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Runs one command and resolves once the process says it is done. */
  async run(line: string): Promise<void> {
    const before = this.out.split('done\n').length;
    this.child.stdin!.write(`${line}\n`);
    while (this.out.split('done\n').length === before) {
      if (this.exited) throw new Error(`opener ${this.pid} exited before "${line}" was done`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    await exited;
  }
}

const gate = kernelGate('open-filter-names.test.ts');
const live = gate.run ? test : test.skip;

/** A directory with perl copies named `bins`, files drop/* and keep/*; a Collector filtering openat by `keep/` and `names`. */
function setup(bins: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-names-'));
  for (const n of ['keep', 'drop']) mkdirSync(join(dir, n));
  for (const b of bins) copyFileSync('/usr/bin/perl', join(dir, b));
  const file = (name: string) => {
    writeFileSync(join(dir, 'drop', name), 'x');
    return join(dir, 'drop', name);
  };
  return { dir, file };
}

/** The read-only openats of files under `dir`, once one of `end` is among them. */
async function opensUntil(c: Collector, dir: string, end: string): Promise<string[]> {
  const openat = syscallNr('openat')!;
  const opens = await c.waitFor(
    (r): r is SyscallRecord => r.kind === KIND.SYSCALL && r.nr === openat && (r.path ?? '').startsWith(dir),
    (rs) => rs.some((r) => r.path === end),
    120_000,
  );
  return opens.map((r) => r.path!.slice(dir.length + 1));
}

live('open filter: the probe keeps the opens of a process the table names as a rule does, whatever its comm', async () => {
  const { dir, file } = setup(['tar', 'rae-a-very-long-name']);
  const openers: Opener[] = [];
  const c = new Collector();
  try {
    const openat = syscallNr('openat')!;
    c.cap.setInterestingSyscalls([openat], [], { syscalls: [openat], exact: [], prefixes: [join(dir, 'keep/')], names: ['tar', 'rae-a-very-long-name-too'] });
    const [tar, perl, long] = [join(dir, 'tar'), '/usr/bin/perl', join(dir, 'rae-a-very-long-name')].map((b) => new Opener(b));
    openers.push(tar!, perl!, long!);
    // exec'd as tar: kept, and still after it renames itself (the table keeps the exec's name)
    await tar!.run(`open ${file('tar-1')}`);
    await tar!.run('name other');
    await tar!.run(`open ${file('tar-renamed')}`);
    // perl: dropped, and still after it renames itself tar (the table's name is perl's); a child it
    // forks then is named tar at its fork: kept
    await perl!.run(`open ${file('perl-1')}`);
    await perl!.run('name tar');
    await perl!.run(`open ${file('perl-renamed')}`);
    await perl!.run(`fork ${file('perl-child')}`);
    // comm is 15 bytes: 'rae-a-very-long' matches the rule's longer name cut there
    await long!.run(`open ${file('long')}`);
    const end = join(dir, 'keep', 'end');
    writeFileSync(end, 'x');
    await perl!.run(`open ${end}`);
    assert.equal(await opensUntil(c, dir, end), ['drop/tar-1', 'drop/tar-renamed', 'drop/perl-child', 'drop/long', 'keep/end']);
  } finally {
    for (const o of openers) await o.stop();
    c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

live('open filter: a process from before the probe keeps every open until the scan names it', async () => {
  const { dir, file } = setup(['tar']);
  // started (and exec'd) before the probe: it has no name there
  const [tar, perl, unnamed] = [join(dir, 'tar'), '/usr/bin/perl', '/usr/bin/perl'].map((b) => new Opener(b));
  const openers = [tar!, perl!, unnamed!];
  let c: Collector | undefined;
  try {
    for (const o of openers) await o.run('noop'); // running before the probe
    c = new Collector();
    const openat = syscallNr('openat')!;
    c.cap.setInterestingSyscalls([openat], [], { syscalls: [openat], exact: [], prefixes: [join(dir, 'keep/')], names: ['tar'] });
    await perl!.run(`open ${file('perl-before')}`); // no name: kept
    // the names as the /proc scan of `rae run` reads them for the table
    c.cap.setProcessNames([tar!.pid, perl!.pid], [Buffer.from('tar'), Buffer.from('perl')]);
    await tar!.run(`open ${file('tar')}`);
    await perl!.run(`open ${file('perl')}`);
    await unnamed!.run(`open ${file('unnamed')}`);
    const end = join(dir, 'keep', 'end');
    writeFileSync(end, 'x');
    await perl!.run(`open ${end}`);
    assert.equal(await opensUntil(c, dir, end), ['drop/perl-before', 'drop/tar', 'drop/unnamed', 'keep/end']);
  } finally {
    for (const o of openers) await o.stop();
    c?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A process whose leader thread exits while its other thread lives on: the thread opens argv[1]
 * on the first byte of stdin (the leader then exits), argv[2] and argv[3] on the second.
 */
const LEADER_EXITS_C = `#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
static char **paths;
static int opened[2];
static void *worker(void *arg) {
  char c;
  if (read(0, &c, 1) != 1) return 0;
  close(open(paths[1], O_RDONLY));
  if (write(opened[1], "x", 1) != 1) return 0;
  if (read(0, &c, 1) != 1) return 0;
  close(open(paths[2], O_RDONLY));
  close(open(paths[3], O_RDONLY));
  return arg;
}
int main(int argc, char **argv) {
  (void)argc;
  paths = argv;
  pthread_t t;
  char c;
  if (pipe(opened) != 0 || pthread_create(&t, 0, worker, 0) != 0) return 1;
  if (read(opened[0], &c, 1) != 1) return 1;
  pthread_exit(0);
}
`;

live('open filter: once the leader thread of a process exits, its other threads keep every open (the table looks them up again)', async () => {
  const { dir, file } = setup([]);
  const c = new Collector();
  let child: ChildProcess | undefined;
  try {
    const bin = join(dir, 'leader-exits');
    writeFileSync(`${bin}.c`, LEADER_EXITS_C);
    execFileSync('cc', ['-O1', '-pthread', '-o', bin, `${bin}.c`]);
    const openat = syscallNr('openat')!;
    c.cap.setInterestingSyscalls([openat], [], { syscalls: [openat], exact: [], prefixes: [join(dir, 'keep/')], names: ['tar'] });
    const end = join(dir, 'keep', 'end');
    writeFileSync(end, 'x');
    child = spawn(bin, [file('before'), file('after'), end], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.stdin!.write('x');
    // the leader is a zombie once it has exited (its thread lives on): wait for that state
    const state = () => readFileSync(`/proc/${child!.pid}/stat`, 'latin1').replace(/^.*\) /s, '')[0];
    const deadline = Date.now() + 120_000;
    while (state() !== 'Z') {
      if (Date.now() > deadline) throw new Error(`the leader of ${child.pid} did not exit (state ${state()})`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.stdin!.end('x');
    await exited;
    // named leader-exits at its exec, not a rule's name: dropped while its leader lives, kept after
    assert.equal(await opensUntil(c, dir, end), ['drop/after', 'keep/end']);
  } finally {
    if (child && child.exitCode === null) child.kill();
    c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
