// Performs one suite test on this node, as upstream's HostRunner does: the process chain of
// `context.processes` (each process spawned by the previous one, the leaf last), the `before`
// script, the resources, the steps and the `after` script in the leaf, then everything undone.
// With `context.container` the chain runs in a container (container.ts), its own process first.
// Consumes a SuiteTest, the test id and the compiled leaf program (leaf-program.ts); produces the
// leaf's report (what failed, if anything).
// The program of every process is the leaf program (perl embedded, running leaf.pl), run through
// a hard link at the process's exePath (default: a fresh directory under the OS temporary
// directory) and, when the test names the process, a symlink of that name, so the kernel's comm
// and exe are the test's, and its argv exactly the test's (argv[0] its `exe`, then its `args`).
// In a container, the links of the chain's processes are made inside it by their parent, as
// upstream's runner makes them there (default exePath under the container's /tmp): a copy of the
// program in the container's writable layer, so proc.is_exe_upper_layer holds as upstream's
// "Drop and execute new binary in container" test needs. Users the chain names that do not exist
// are created for the test and deleted after it, as upstream does.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSTANTS } from './constants.js';
import type { ChainContainers, ChainProcess } from './container.js';
import type { ProcessSpec, SuiteTest } from './loader.js';

/** The environment variable that carries the test id, upstream's name (alerts are matched by it in proc.env). */
export const TEST_ID_ENV = 'FALCO_EVENT_GENERATOR_TEST_ID';

const LEAF = fileURLToPath(new URL('./leaf.pl', import.meta.url));

/**
 * What setpriv runs to start a process as a user or with capabilities: setpriv execs its command
 * with argv[0] the path, so perl, between them, execs the process's link with its own argv[0]
 * (`TRAMPOLINE path argv0 args...`).
 */
const TRAMPOLINE = ['/usr/bin/perl', '-e', 'exec { shift @ARGV } @ARGV; exit 127'];

/** The leaf's report. */
export interface PerformReport {
  ok: boolean;
  error?: string;
}

/** Splits `args` as upstream does: blanks separate, single or double quotes keep a group together. */
function splitArgs(args: string | undefined): string[] {
  return [...(args ?? '').matchAll(/"([^"]+)"|'([^']+)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** uid and gid of a user, or undefined when it does not exist. */
function userIds(name: string): { uid: number; gid: number } | undefined {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Capability names by number (linux/capability.h). */
const CAP_NAMES = (
  'chown dac_override dac_read_search fowner fsetid kill setgid setuid setpcap linux_immutable net_bind_service net_broadcast ' +
  'net_admin net_raw ipc_lock ipc_owner sys_module sys_rawio sys_chroot sys_ptrace sys_pacct sys_admin sys_boot sys_nice ' +
  'sys_resource sys_time sys_tty_config mknod lease audit_write audit_control setfcap mac_override mac_admin syslog wake_alarm ' +
  'block_suspend audit_read perfmon bpf checkpoint_restore'
).split(' ');

/**
 * In the caps of a process started in a container: `all` as its parent there can give it, the
 * capabilities of that parent's bounding set, which leaf.pl puts in its place (a privileged
 * container's bounding set may lack some of the node's: setpriv fails raising those).
 */
const PARENT_BOUNDING = '@bounding';

/** `all` as this process can give it: the capabilities of its bounding set (a container's may lack some). */
function boundingCaps(): string[] {
  const hex = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  const bits = BigInt(`0x${hex}`);
  return CAP_NAMES.filter((_n, i) => (bits >> BigInt(i)) & 1n);
}

/**
 * setpriv's options that start a process as the test asks: its user (uid, gid, no supplementary
 * groups) and its capabilities, a cap_from_text(3) set such as `cap_net_admin,cap_chown=ep` on
 * the leaf, else upstream's default `all=iep`, kept across exec as ambient capabilities by a
 * process that is not root (so a non-root parent can still start its child as another user).
 */
function setprivOptions(ids: { uid?: number; gid?: number }, capabilities: string | undefined, inContainer: boolean): string[] | undefined {
  if (ids.uid === undefined && capabilities === undefined) return undefined;
  const names = (capabilities ?? 'all')
    .replace(/[=+-][eip]*$/i, '')
    .split(',')
    .map((c) => c.trim().toLowerCase().replace(/^cap_/, ''))
    .filter((c) => c !== '');
  const set = ['-all', ...(names.includes('all') ? (inContainer ? [PARENT_BOUNDING] : boundingCaps()) : names).map((n) => `+${n}`)].join(',');
  const user = ids.uid === undefined ? [] : ['--reuid', String(ids.uid), '--regid', String(ids.gid), '--clear-groups'];
  const ambient = (ids.uid ?? 0) !== 0 ? ['--ambient-caps', set] : [];
  return [...user, '--inh-caps', set, ...ambient, '--bounding-set', set];
}

/** What a test is performed with. */
export interface PerformWith {
  /** The compiled leaf program (leaf-program.ts). */
  program: string;
  /** Where a test with `context.container` runs its chain (container.ts). */
  containers: ChainContainers;
  log(line: string): void;
}

/** A harmless, undone run of one test; never throws for a failure of the test itself (see the report). */
export async function performTest(test: SuiteTest, testId: string, using: PerformWith, timeoutMs = 60_000): Promise<PerformReport> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-suite-'));
  // the chain's users (any user the test names) run the links below and write the report
  chmodSync(dir, 0o755);
  const undo: Array<() => void> = [];
  try {
    const container = test.context?.container ?? undefined;
    const processes = test.context?.processes ?? [];
    // in a container, upstream's chain starts with the container's own process (its environment
    // the container's `env`), which is the leaf when the test names no process
    const specs: ProcessSpec[] = container ? [{ env: container.env as Record<string, string> | undefined }, ...processes] : processes.length > 0 ? processes : [{}];
    const base = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', RAE_SUITE_PLAN: join(dir, 'plan.json') };
    // in a container the program is read from the plan directory, the one node directory it sees
    const program = container ? join(dir, 'leaf') : using.program;
    if (container) copyFileSync(using.program, program);
    const exeFor = (p: ProcessSpec, i: string): { path: string; argv0: string } => {
      const real = p.exePath ?? join(dir, `proc${i}`, `eg-${i}`);
      mkMissingDirs(dirname(real), undo);
      hardLinkOrCopy(program, real);
      undo.push(() => rmSync(real, { force: true }));
      let path = real;
      if (p.name !== undefined) {
        path = join(dirname(real), p.name);
        symlinkSync(real, path);
        undo.push(() => rmSync(path, { force: true }));
      }
      return { path, argv0: p.exe ?? basename(path) };
    };
    const userOf = (p: ProcessSpec): { uid?: number; gid?: number } => {
      if (p.user === undefined) return {};
      let ids = userIds(p.user);
      if (!ids) {
        const r = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', p.user], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`user ${p.user}: useradd failed: ${r.stderr.trim()}`);
        const name = p.user;
        undo.push(() => void spawnSync('userdel', [name]));
        ids = userIds(p.user)!;
      }
      return ids;
    };
    /** A process of the chain in a container: its parent makes its links there (leaf.pl make_exe). */
    const madeInContainer = (p: ProcessSpec, i: number): { path: string; argv0: string; make: { from: string; real: string } } => {
      const real = p.exePath ?? join('/tmp', `rae-suite-${testId.slice(0, 8)}-${i}`, `eg-${i}`);
      const path = p.name !== undefined ? join(dirname(real), p.name) : real;
      return { path, argv0: p.exe ?? basename(path), make: { from: program, real } };
    };
    const chain: ChainProcess[] = specs.map((p, i) => {
      const ids = userOf(p);
      const leaf = i === specs.length - 1;
      // the test id first: a kept environment cut at a size limit still carries it
      const env = { [TEST_ID_ENV]: testId, ...base, ...(p.env ?? {}) };
      return {
        ...(container && i > 0 ? madeInContainer(p, i) : exeFor(p, String(i))),
        args: splitArgs(p.args),
        env,
        setpriv: setprivOptions(ids, leaf ? p.capabilities : undefined, container !== undefined && i > 0),
      };
    });
    for (const r of test.resources) if (r.type === 'clientServer') loopbackAddress(String(r.address ?? ''), undo);
    const resources = test.resources.map((r, i) => {
      if (r.type !== 'process') return r;
      const p = r as ProcessSpec;
      const args = splitArgs(p.args);
      // the test id too: an alert a resource's process raises (a fileless exec) is the test's
      const env = { [TEST_ID_ENV]: testId, ...base, ...(p.env ?? {}) };
      // fileless (upstream's fileLess): the program copied into a memfd named as the resource and
      // run from there (leaf.pl spawn_process); no link on any file system
      if (r.fileLess === true) return { ...r, process: { path: program, argv0: p.exe ?? r.name, args, env, memfd: r.name } };
      return { ...r, process: { ...exeFor(p, `r${i}`), args, env } };
    });
    // in a container leaf.pl too is read from the plan directory
    const script = container ? join(dir, 'leaf.pl') : LEAF;
    if (container) copyFileSync(LEAF, script);
    const plan = {
      script,
      dir,
      report: join(dir, 'report.json'),
      chain,
      before: test.before,
      after: test.after,
      resources,
      steps: test.steps,
      constants: CONSTANTS,
      trampoline: TRAMPOLINE,
      capNames: CAP_NAMES,
    };
    writeFileSync(base.RAE_SUITE_PLAN, JSON.stringify(plan), { mode: 0o644 });
    writeFileSync(plan.report, '', { mode: 0o666 });
    chmodSync(plan.report, 0o666);
    let code: string;
    if (container) {
      const r = await using.containers.run({ entry: chain[0]!, script, dir, testId, spec: container }, timeoutMs);
      code = r.code;
      if (!r.container) return { ok: false, error: `context.container: ${r.code}` };
      using.log(`suite: ${test.name}: the chain ran in container ${r.container.name} (${r.container.runtime}, id ${r.container.id.slice(0, 12)})`);
    } else code = await run(chain[0]!, script, timeoutMs);
    let report: PerformReport;
    try {
      report = JSON.parse(readFileSync(plan.report, 'utf8')) as PerformReport;
    } catch {
      report = { ok: false, error: `the process chain ended (${code}) without a report` };
    }
    return report;
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  } finally {
    for (const u of undo.reverse()) {
      try {
        u();
      } catch {
        // best effort: the rest is still undone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A clientServer address that this node does not have is added to the loopback interface for the
 * test and removed after it, as upstream's resource tunes the network so client and server meet.
 */
function loopbackAddress(address: string, undo: Array<() => void>): void {
  const host = /^\[(.*)\]:\d+$/.exec(address)?.[1] ?? /^(.*):\d+$/.exec(address)?.[1];
  // every 127.0.0.0/8 address is local on any loopback that is up (the kernel's local route for
  // lo), the node's and a container's alike: nothing to add
  if (!host || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === 'localhost') return;
  const local = spawnSync('ip', ['-o', 'addr', 'show', 'to', host], { encoding: 'utf8' });
  if (local.status === 0 && local.stdout.trim() !== '') return;
  const cidr = `${host}/${host.includes(':') ? 128 : 32}`;
  const add = spawnSync('ip', ['addr', 'add', cidr, 'dev', 'lo'], { encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`clientServer ${address}: cannot add ${cidr} to lo: ${(add.stderr || add.error?.message || '').trim()}`);
  undo.push(() => void spawnSync('ip', ['addr', 'del', cidr, 'dev', 'lo']));
}

function hardLinkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV' && (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    copyFileSync(from, to);
    spawnSync('chmod', ['0755', to]);
  }
}

/** Makes the missing directories up to `dir`; each is removed at the end (innermost first). */
function mkMissingDirs(dir: string, undo: Array<() => void>): void {
  const made = mkdirSync(dir, { recursive: true });
  if (made === undefined) return;
  const list: string[] = [];
  for (let d = dir; d.length >= made.length; d = dirname(d)) list.push(d);
  undo.push(() => {
    for (const d of list) rmdirSync(d);
  });
}

/** Runs the chain's first process (leaf.pl, `script`, on its stdin); resolves with its exit code or signal. */
function run(p: ChainProcess, script: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const program = openSync(script, 'r');
    const env = { ...p.env, RAE_SUITE_STAGE: '0' };
    const opts = { env, stdio: [program, 'ignore', 'ignore'] as ['pipe' | number, 'ignore', 'ignore'] };
    const child = p.setpriv ? spawn('/usr/bin/setpriv', [...p.setpriv, '--', ...TRAMPOLINE, p.path, p.argv0, ...p.args], opts) : spawn(p.path, p.args, { ...opts, argv0: p.argv0 });
    closeSync(program);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(`error ${err.message}`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `signal ${signal}` : `exit ${code}`);
    });
  });
}
