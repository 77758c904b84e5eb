// Where the engine's time per kernel record goes, apart from the kernel and the machine's load (a
// part of `capture`: `npm run bench -- capture` runs it too, `npm run bench -- capture-split`
// alone; no root needed): a batch of openat records of one process, as the capture bench's open
// generator makes them (absolute path, O_RDONLY, fd 3), translated into eval records by the
// native translator (KernelIngest.ingestInto: probes/addon/ingest.c) and then evaluated by the
// compiled module (RuleModule.evaluateRecords), ROUNDS times, each part timed in this process's
// CPU time (process.cpuUsage, not wall time: the machine's other work does not count). Figures per
// rule sets (the stable ones, then every built-in set: all_sets_...): translate_ns_per_open_record
// and evaluate_ns_per_open_record. What the live capture bench measures beyond their sum is the
// rest of the path: the ring copy, cutting batches around execs, per-batch JavaScript, the watcher
// thread and the engine's system time (docs/benchmarks.md, "Where the kernel path's time goes").
import { builtinRulesFiles } from '../host/engine/builtin.js';
import { loadRules } from '../host/engine/index.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { encodeProcRecord } from '../host/sources/syscall/procfs.js';
import { openat, procInfo } from '../support/kernel-records.js';
import { figure, progress } from './report.js';

const S = 'capture';
const ROUNDS = 100;
/** Records per batch: about what one drained batch of the open steps holds. */
const RECORDS = 16_000;
const PID = 4242;

/** Times the two parts for the rule sets `sets`; prints their figures. */
async function split(sets: string[]): Promise<void> {
  const prefix = sets.length > 1 ? 'all_sets_' : '';
  const compiler = new RuleCompiler();
  const c = await compiler.compile(loadRules(builtinRulesFiles(sets).files).ruleset.rules);
  await compiler.close();
  if (!c.ok) throw new Error(`capture-split: the built-in rule sets ${sets.join(', ')} did not compile`);
  const created = RuleModule.create(c.compiled);
  if (!created.ok) throw new Error(created.error.message);
  const module = created.module;
  const ki = new KernelIngest({ hostname: 'bench' });
  if (!ki.native) progress('capture-split: the addon is not built: the JavaScript translator is timed');
  const buf = new Uint8Array(8 << 20);
  let len = encodeProcRecord(procInfo(PID, 1, 'loadgen', { args: [Buffer.from('loadgen')] }), buf, 0, 1n);
  for (let i = 0; i < RECORDS; i++) len += openat(buf, len, PID, '/tmp/rae-bench-capture-AbCdEf/some-file-to-open.txt');
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  let translate = 0;
  let evaluate = 0;
  let matches = 0;
  for (let round = -5; round < ROUNDS; round++) {
    const t0 = cpu();
    const n = ki.ingestInto(module, buf, len, 0n);
    const t1 = cpu();
    const r = module.evaluateRecords('syscall', n, true);
    const t2 = cpu();
    if (n !== RECORDS || !r.ok) throw new Error(`capture-split: ${n} of ${RECORDS} records translated${r.ok ? '' : ', the evaluation failed'}`);
    matches += r.matches.length;
    if (round < 0) continue; // warm-up: the module's tier-up, the translator's first batch
    translate += t1 - t0;
    evaluate += t2 - t1;
  }
  const ns = (us: number) => (us * 1000) / (ROUNDS * RECORDS);
  const detail = { sets: sets.join(' '), records: RECORDS, rounds: ROUNDS, native: ki.native !== undefined, matches };
  figure(S, `${prefix}translate_ns_per_open_record`, ns(translate), 'ns', detail);
  figure(S, `${prefix}evaluate_ns_per_open_record`, ns(evaluate), 'ns', detail);
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  await split(['syscall']);
  await split(['syscall', 'syscall-incubating', 'syscall-sandbox']);
}
