// Scenario `startup` (issue #33, start-up): how soon `rae run` serves, from a fresh build
// (scripts/build.mjs) with npm start's defaults (every component on; ports 0, compilerIdleSeconds
// 3), in rounds, each figure the median:
//   first_start_ready_s          a fresh state directory (the API's database created, the rules'
//                                module compiled, or taken from the build's shipped module cache:
//                                host/cli/run/ship-module.ts) to `run: ready`
//   first_start_ready_cpu_s      the CPU `rae run` used by then (user + system, its threads and
//                                the child processes it has waited for: the database's creation)
//   restart_ready_s              the same state directory started again (and restart_ready_cpu_s)
//   rule_change_to_compiled_ms   in that restart, a new syscall rule's manifest written -> its
//                                ruleset on the compiled module (footprint.ts ruleChange; the
//                                restart took its module from the module cache, so the compile
//                                worker starts for it), and rule_change_to_byte_path_ms
// RAE_BENCH_OLD=REF measures REF's build as well, in turn with this one within each round (the
// order flips every round), as old_... figures, and each figure's ratio this/old (…_ratio): the
// machine's load falls on both. RAE_BENCH_ROUNDS sets the rounds (default 3).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ruleChange, startRae } from './footprint.js';
import { buildHead, type Head } from './footprint-split.js';
import { figure, median, progress } from './report.js';

const S = 'startup';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CONFIG = 'rules:\n  compilerIdleSeconds: 3\nforwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n';

/** One round's figures of one head. */
interface Round {
  first_start_ready_s: number;
  first_start_ready_cpu_s: number;
  restart_ready_s: number;
  restart_ready_cpu_s: number;
  rule_change_to_compiled_ms: number;
  rule_change_to_byte_path_ms?: number;
}

/** CPU seconds of `pid` and of its children it has waited for (/proc/PID/stat utime, stime, cutime, cstime; USER_HZ 100). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0) / 100;
}

/** A first start and a restart of `head` on a fresh state directory under `dir`, with a rule change in the restart. */
async function round(head: Head, config: string, dir: string): Promise<Round> {
  const state = join(dir, 'state');
  rmSync(state, { recursive: true, force: true });
  const first = startRae(head.build, config, state);
  let firstS: number;
  let firstCpu: number;
  try {
    firstS = (await first.waitFor(/run: ready \(/)).s;
    firstCpu = cpuSeconds(first.pid);
  } finally {
    await first.stop();
  }
  const again = startRae(head.build, config, state);
  try {
    const restartS = (await again.waitFor(/run: ready \(/)).s;
    const restartCpu = cpuSeconds(again.pid);
    await sleep(3000); // what starts after ready (the console) settles
    const change = await ruleChange(state, again);
    progress(`startup: first start ${firstS.toFixed(2)} s (${firstCpu.toFixed(2)} s CPU), restart ${restartS.toFixed(2)} s (${restartCpu.toFixed(2)} s CPU), rule change to compiled ${change.compiledMs.toFixed(0)} ms`);
    return { first_start_ready_s: firstS, first_start_ready_cpu_s: firstCpu, restart_ready_s: restartS, restart_ready_cpu_s: restartCpu, rule_change_to_compiled_ms: change.compiledMs, rule_change_to_byte_path_ms: change.byteMs };
  } finally {
    await again.stop();
  }
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  const old = process.env.RAE_BENCH_OLD;
  const rounds = Number(process.env.RAE_BENCH_ROUNDS ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`startup: RAE_BENCH_ROUNDS must be a whole number >= 1, not ${process.env.RAE_BENCH_ROUNDS}`);
  const dir = mkdtempSync(join(tmpdir(), 'rae-bench-startup-'));
  try {
    const config = join(dir, 'config.yaml');
    writeFileSync(config, CONFIG);
    const heads: Array<{ prefix: string; head: Head; rounds: Round[] }> = [];
    for (const [prefix, ref] of [['', undefined], ...(old ? [['old_', old]] : [])] as Array<[string, string | undefined]>) {
      mkdirSync(join(dir, `${prefix}head`));
      progress(`startup: building ${ref ?? 'this checkout'}`);
      heads.push({ prefix, head: buildHead(join(dir, `${prefix}head`), ref), rounds: [] });
    }
    for (let i = 0; i < rounds; i++) {
      for (const h of i % 2 ? [...heads].reverse() : heads) {
        progress(`startup: round ${i + 1}, ${h.prefix ? `old (${old})` : 'this checkout'}`);
        h.rounds.push(await round(h.head, config, join(dir, `${h.prefix}head`)));
      }
    }
    const medianOf = (rs: Round[], k: keyof Round) => {
      const xs = rs.map((r) => r[k]).filter((x): x is number => x !== undefined);
      return xs.length > 0 ? median(xs) : undefined;
    };
    const keys: Array<keyof Round> = ['first_start_ready_s', 'first_start_ready_cpu_s', 'restart_ready_s', 'restart_ready_cpu_s', 'rule_change_to_compiled_ms', 'rule_change_to_byte_path_ms'];
    for (const k of keys) {
      for (const h of heads) {
        const m = medianOf(h.rounds, k);
        if (m !== undefined) figure(S, `${h.prefix}${k}`, m, k.endsWith('_ms') ? 'ms' : 's', { rounds: h.rounds.length, values: h.rounds.map((r) => r[k] && Number(r[k].toFixed(3))) });
      }
      const now = medianOf(heads[0]!.rounds, k);
      const before = heads[1] && medianOf(heads[1].rounds, k);
      if (now !== undefined && before) figure(S, `${k}_ratio`, now / before, 'this/old', { old });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
