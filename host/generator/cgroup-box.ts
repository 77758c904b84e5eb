// Cgroup boxes: the containers of the event generator when no Docker/Podman runtime answers. A
// box is made by the generator itself from util-linux and the node's busybox-static: the busybox
// rootfs (image.ts) as the lower layer of an overlay whose upper layer is the box's temporary
// directory (files written in the box land in an upper layer, as in a real container:
// proc.is_exe_upper_layer), a long-lived init (sleep) in its own mount and network namespaces
// (`unshare`, private propagation: the overlay, /proc and /dev exist only there; the network is
// only a loopback, up), chrooted into the overlay, and a fresh cgroup v2 directory named like a
// container's (`<cgroup2>/rae-event-generator-<pid>/<64 hex>`), which the engine reads as the
// container.id (host/sources/syscall/thread-table.ts containerId). Every process of the box
// joins that cgroup before it execs anything, so each of its events carries the container.
// exec() joins the cgroup, enters the init's namespaces (`nsenter`) and chroots (with a
// pseudo-terminal from `script` when asked). The plain box's processes lose CAP_SYS_ADMIN
// (bounding, inheritable, permitted: Docker's default set has none), the privileged one keeps
// every capability. A box has no runtime: no container metadata (name, image, privileged), no
// runtime process as the parent of an exec (Action.container.runtimeOnly says which actions need
// those). close() kills every process of the boxes, removes the cgroups and the temporary
// directories (the mounts go with the namespaces); so does SIGINT/SIGTERM/SIGHUP before exiting.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cgroup2Mount } from '../sources/syscall/procfs.js';
import { isRoot, which } from './exec.js';
import { BUSYBOX, busyboxRootfsDir, busyboxUnavailable } from './image.js';
import { shQuote } from './isolate.js';
import { ContainerHostBase } from './container-host.js';
import type { ActionContainer } from './types.js';

/** The programs a box is made with (util-linux, coreutils). */
const PROGRAMS = ['unshare', 'nsenter', 'setpriv', 'chroot', 'script', 'mount', 'sh'] as const;
type Program = (typeof PROGRAMS)[number];
/** The environment of every process of a box (the busybox image's PATH; nothing of the generator's). */
const BOX_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', SHELL: '/bin/sh', TERM: 'xterm' };
/** The devices a box's /dev has (bound from the node's, as Docker's default /dev has them). */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];
/** How long the init may take to mount its rootfs. */
const START_TIMEOUT_MS = 20_000;

/** A node path bound into every box (at `target`, read-only unless writable): files the box's image lacks. */
export interface BoxBind {
  source: string;
  target: string;
  writable?: boolean;
}

/** Options of the boxes. */
export interface BoxOptions {
  log?(line: string): void;
  /** Node paths bound into each box after its rootfs is mounted (they go with its mount namespace). */
  binds?: readonly BoxBind[];
}

/** Why no boxes, or the boxes. */
export type BoxesOpening = { runner: CgroupBoxes; unavailable?: undefined } | { runner?: undefined; unavailable: string };

/** One running box. */
interface Box {
  container: ActionContainer;
  init: ChildProcess;
  cgroup: string;
  dir: string;
}

/** Makes, uses and removes the generator's cgroup boxes: one plain and one privileged, on first use. */
export class CgroupBoxes extends ContainerHostBase {
  readonly runtime = 'cgroup' as const;
  protected readonly what = 'the cgroup boxes';
  private readonly boxes: Box[] = [];
  /** The generator's own processes of the boxes (inits, execs) until they are reaped. */
  private readonly children = new Set<ChildProcess>();
  /** The temporary directory of every box (the rootfs below it, made once), and the cgroup parent. */
  private base?: { dir: string; rootfs: string; cgroup: string };

  private constructor(
    private readonly bin: Record<Program, string>,
    private readonly cgroup2: string,
    private readonly opts: BoxOptions,
  ) {
    super();
  }

  /** The boxes, or why they cannot be made here: not root, no cgroup v2, a missing program, no overlayfs. */
  static async open(opts: BoxOptions = {}): Promise<BoxesOpening> {
    const why = (w: string) => ({ unavailable: `a cgroup box (no runtime) cannot be made: ${w}` });
    if (!isRoot()) return why('needs root');
    const cgroup2 = cgroup2Mount();
    if (!cgroup2) return why('no cgroup v2 mount (/proc/self/mounts)');
    const missing = PROGRAMS.filter((p) => !which(p));
    if (missing.length > 0) return why(`needs ${missing.join(', ')} on PATH (util-linux, coreutils)`);
    const busybox = busyboxUnavailable();
    if (busybox) return why(busybox);
    const bin = Object.fromEntries(PROGRAMS.map((p) => [p, which(p)!])) as Record<Program, string>;
    const probe = join(cgroup2, `rae-event-generator-${process.pid}-probe`);
    try {
      mkdirSync(probe);
      rmdirSync(probe);
    } catch (err) {
      return why(`cannot make a cgroup under ${cgroup2}: ${(err as Error).message}`);
    }
    const overlay = overlayUnmountable(bin);
    if (overlay) return why(overlay);
    return { runner: new CgroupBoxes(bin, cgroup2, opts) };
  }

  protected async make(privileged: boolean): Promise<ActionContainer> {
    if (!this.base) {
      const dir = mkdtempSync(join(tmpdir(), 'rae-event-generator-box-'));
      const cgroup = join(this.cgroup2, `rae-event-generator-${process.pid}`);
      this.base = { dir, rootfs: busyboxRootfsDir(dir), cgroup };
      mkdirSync(cgroup, { recursive: true });
    }
    const kind = privileged ? 'privileged' : 'plain';
    const id = randomBytes(32).toString('hex');
    const name = `rae-event-generator-${process.pid}-${kind}`;
    const dir = join(this.base.dir, kind);
    const root = join(dir, 'root');
    for (const d of ['upper', 'work', 'root']) mkdirSync(join(dir, d), { recursive: true });
    const cgroup = join(this.base.cgroup, id);
    mkdirSync(cgroup);
    const q = shQuote;
    // Runs in the new namespaces with every capability, then becomes the box's sleeping init.
    const setup = [
      `mount -t overlay rae-event-generator-box -o ${q(`lowerdir=${this.base.rootfs},upperdir=${join(dir, 'upper')},workdir=${join(dir, 'work')}`)} ${q(root)}`,
      `mount -t proc proc ${q(`${root}/proc`)}`,
      `mount -t tmpfs -o mode=755,nosuid rae-event-generator-dev ${q(`${root}/dev`)}`,
      ...DEVICES.map((d) => `touch ${q(`${root}/dev/${d}`)} && mount --bind /dev/${d} ${q(`${root}/dev/${d}`)}`),
      ...(this.opts.binds ?? []).flatMap((b) => {
        const at = q(join(root, b.target));
        const make = statSync(b.source).isDirectory() ? `mkdir -p ${at}` : `mkdir -p ${q(dirname(join(root, b.target)))} && touch ${at}`;
        return [`${make} && mount --bind ${q(b.source)} ${at}`, ...(b.writable ? [] : [`mount -o remount,bind,ro ${at}`])];
      }),
      `${BUSYBOX} ip link set lo up`,
      'echo ready',
      `exec ${this.confined(privileged, root, ['/bin/sleep', '2147483647']).map(q).join(' ')}`,
    ].join('\n');
    const init = spawn(this.bin.sh, ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, this.bin.unshare, '--mount', '--net', '--propagation', 'private', this.bin.sh, '-ec', setup], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: BOX_ENV,
    });
    this.track(init);
    const box: Box = { container: { runtime: 'cgroup', id, name, exec: (command, o) => this.exec(box, privileged, command, o) }, init, cgroup, dir };
    this.boxes.push(box);
    await ready(init, name);
    this.opts.log?.(`event-generator: started ${privileged ? 'privileged ' : ''}container ${name} (${id.slice(0, 12)}), a cgroup box (no runtime) in ${cgroup}`);
    return box.container;
  }

  private track(child: ChildProcess): void {
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
  }

  /** The argv that runs `argv` chrooted in `root`, without CAP_SYS_ADMIN unless privileged. */
  private confined(privileged: boolean, root: string, argv: readonly string[]): string[] {
    const drop = privileged ? [] : [this.bin.setpriv, '--inh-caps=-all', '--bounding-set=-sys_admin'];
    return [...drop, this.bin.chroot, root, ...argv];
  }

  /** `sh -c command` (busybox) or the argv `command` in the box; resolves with its exit status. */
  private exec(box: Box, privileged: boolean, command: string | readonly string[], o: { tty?: boolean; timeoutMs?: number } = {}): Promise<number> {
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : [...command];
    const inBox = [this.bin.nsenter, '-t', String(box.init.pid), '-m', '-n', ...this.confined(privileged, join(box.dir, 'root'), argv)];
    // `script` gives the command a pseudo-terminal as its controlling terminal (proc.tty != 0).
    const run = o.tty ? [this.bin.script, '-qec', inBox.map(shQuote).join(' '), '/dev/null'] : inBox;
    const what = `${typeof command === 'string' ? `sh -c '${command}'` : argv.join(' ')} in ${box.container.name}`;
    const timeoutMs = o.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const child = spawn(this.bin.sh, ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', box.cgroup, ...run], { stdio: 'ignore', env: BOX_ENV });
      this.track(child);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`${what}: ${err.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (signal) reject(new Error(signal === 'SIGKILL' ? `${what} did not end in ${timeoutMs} ms` : `${what} killed by ${signal}`));
        else resolve(code ?? 0);
      });
    });
  }

  /** Kills every process of the boxes, removes their cgroups and temporary directories. */
  protected async remove(): Promise<void> {
    const errors: string[] = [];
    for (const box of this.boxes) {
      const left = await emptyCgroup(box.cgroup);
      if (left) errors.push(`${box.container.name}: ${left}`);
      else this.opts.log?.(`event-generator: removed container ${box.container.id.slice(0, 12)}`);
    }
    // reaped here, they leave no zombie behind when the generator exits right after (on a signal)
    const reaped = [...this.children].map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(undefined) : c.once('exit', r))));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(reaped), new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
    if (this.base) {
      try {
        if (existsSync(this.base.cgroup)) rmdirSync(this.base.cgroup);
      } catch (err) {
        errors.push(`removing ${this.base.cgroup}: ${(err as Error).message}`);
      }
      rmSync(this.base.dir, { recursive: true, force: true });
    }
    if (errors.length > 0) throw new Error(errors.join('; '));
  }
}

/** Resolves once the init said it is ready; rejects with its stderr when it exits first or takes too long. */
function ready(init: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(`did not start in ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`starting cgroup box ${name}: ${why}${err ? `: ${err.trim().slice(0, 300)}` : ''}`));
    };
    init.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
    init.on('error', (e) => fail(e.message));
    init.on('exit', (code, signal) => fail(`its init exited (${code ?? signal})`));
    init.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (!out.includes('ready\n')) return;
      clearTimeout(timer);
      // the init sleeps from now on: nothing more to read, and it must not keep the generator alive
      init.stdout!.destroy();
      init.stderr!.destroy();
      init.unref();
      resolve();
    });
  });
}

/** Kills every process of a cgroup and removes it (bounded: 10 s); resolves with what is left, or undefined. */
async function emptyCgroup(cgroup: string): Promise<string | undefined> {
  if (!existsSync(cgroup)) return undefined;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = readFileSync(join(cgroup, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    if (pids.length === 0) {
      try {
        rmdirSync(cgroup);
        return undefined;
      } catch (err) {
        if (Date.now() > deadline) return `removing ${cgroup}: ${(err as Error).message}`;
      }
    } else if (existsSync(join(cgroup, 'cgroup.kill'))) writeFileSync(join(cgroup, 'cgroup.kill'), '1');
    else
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // exited meanwhile
        }
      }
    if (Date.now() > deadline) return `processes ${pids.join(' ')} are still in ${cgroup}`;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Why an overlay cannot be mounted here (tried in a private mount namespace of a temporary directory), or undefined. */
function overlayUnmountable(bin: Record<Program, string>): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'rae-event-generator-overlay-'));
  try {
    for (const d of ['lower', 'upper', 'work', 'merged']) mkdirSync(join(dir, d));
    const opts = `lowerdir=${dir}/lower,upperdir=${dir}/upper,workdir=${dir}/work`;
    const r = spawnSync(bin.unshare, ['--mount', '--propagation', 'private', bin.mount, '-t', 'overlay', 'rae-event-generator-probe', '-o', opts, join(dir, 'merged')], { encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 ? undefined : `overlayfs cannot be mounted in ${tmpdir()}: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
