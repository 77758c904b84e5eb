// BPF program statistics, what a node pays for the probe in the kernel: `kernel.bpf_stats_enabled`
// turned on for a measurement and restored after it (also when the process ends on an uncaught
// error or on SIGINT/SIGTERM/SIGHUP), and the run time and run count of one process's own BPF
// programs. Consumes /proc/sys/kernel/bpf_stats_enabled, /proc/PID/fdinfo (a program fd's fdinfo
// carries prog_id, run_time_ns and run_cnt; a link's carries prog_id alone) and `bpftool prog
// show --json` for the programs' names; produces ProgramRun lists. The kernel counts run time
// only while the statistics are on (they add two clock reads to each program run), and the time
// is spent in the task whose event ran the program (a syscall's exit: the task making it), never
// in the process that loaded the probe. Used by the capture bench and its test; root only.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { stopOnSignal } from './cleanup.js';

const SYSCTL = '/proc/sys/kernel/bpf_stats_enabled';

/** The value of kernel.bpf_stats_enabled: '0' or '1'. */
export function bpfStatsSetting(): string {
  return readFileSync(SYSCTL, 'utf8').trim();
}

/**
 * Turns kernel.bpf_stats_enabled on; the returned function sets it back to what it was (once; it
 * also runs at process exit and on SIGINT/SIGTERM/SIGHUP). Already on: left as found, since
 * whoever turned it on turns it off.
 */
export function enableBpfStats(): () => void {
  const was = bpfStatsSetting();
  if (was !== '0') return () => undefined;
  writeFileSync(SYSCTL, '1');
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    writeFileSync(SYSCTL, was);
    process.off('exit', restore);
    unregister();
  };
  const unregister = stopOnSignal(restore);
  process.on('exit', restore);
  return restore;
}

/** One BPF program's cumulative figures since it was loaded (run time counted while the statistics were on). */
export interface ProgramRun {
  id: number;
  /** The program's name as the kernel keeps it (at most 15 bytes). */
  name: string;
  runTimeNs: number;
  runCnt: number;
}

/** A numeric `key:\tvalue` line of an fdinfo text. */
function fdinfoNumber(text: string, key: string): number | undefined {
  const m = text.match(new RegExp(`^${key}:\\s+(\\d+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

/** The names of the loaded BPF programs by id (`bpftool prog show --json`). */
function programNames(): Map<number, string> {
  const out = execFileSync('bpftool', ['prog', 'show', '--json'], { encoding: 'utf8', env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } });
  return new Map((JSON.parse(out) as Array<{ id: number; name?: string }>).map((p) => [p.id, p.name ?? `prog ${p.id}`]));
}

/** The BPF programs process `pid` holds a program fd of (a probe loaded through libbpf keeps one per program), by id. */
export function programRuns(pid: number): ProgramRun[] {
  const dir = `/proc/${pid}/fdinfo`;
  const runs = new Map<number, Omit<ProgramRun, 'name'>>();
  for (const fd of readdirSync(dir)) {
    let text: string;
    try {
      text = readFileSync(`${dir}/${fd}`, 'utf8');
    } catch {
      continue; // closed since the listing
    }
    const id = fdinfoNumber(text, 'prog_id');
    const runTimeNs = fdinfoNumber(text, 'run_time_ns');
    const runCnt = fdinfoNumber(text, 'run_cnt');
    if (id !== undefined && runTimeNs !== undefined && runCnt !== undefined) runs.set(id, { id, runTimeNs, runCnt });
  }
  if (runs.size === 0) return [];
  const names = programNames();
  return [...runs.values()].map((r) => ({ ...r, name: names.get(r.id) ?? `prog ${r.id}` })).sort((a, b) => a.id - b.id);
}

/** Per program, what ran between two samples of programRuns (programs in `after` only: from zero). */
export function runsBetween(before: readonly ProgramRun[], after: readonly ProgramRun[]): ProgramRun[] {
  const old = new Map(before.map((r) => [r.id, r]));
  return after.map((r) => ({ ...r, runTimeNs: r.runTimeNs - (old.get(r.id)?.runTimeNs ?? 0), runCnt: r.runCnt - (old.get(r.id)?.runCnt ?? 0) }));
}
