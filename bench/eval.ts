// Benchmark `eval`: the compiled evaluator against the reference interpreter on the stable
// ruleset (falco_rules.yaml, enabled rules), 1,048,576 synthetic syscall events (70% opens,
// 20% execs, 10% connect, ptrace, symlink and others; a 400-process table with ancestry, 3000
// paths, 0.3% sensitive files, 15% of opens for writing), batches of 4096, on the main thread.
// The WASM figure starts from binary batches (records + strings, as a byte source delivers them)
// copied into linear memory, then one evaluate call per batch (watchdog on, as the engine runs
// it), and the same without the watchdog, passes alternated; the encoder figure (JS objects ->
// records) is reported on its own. Also: compile times, change-to-live and swap stall through
// DetectionEngine.load, first batch after a swap, batch latency while the worker compiles, the
// cost of long values (events with a 64 KiB command line against the same with short ones, on
// the decoded path: encode + evaluate), and resident memory. RAE_BENCH_RULE_COUNTERS=off builds
// every module without the rule figures (docs/rule-cost.md: counters, profile loops, the
// tally), to compare with a head from before them.
import { loadRules, type LoadedRule } from '../host/engine/index.js';
import { RuleMatcher } from '../host/engine/matcher.js';
import { MEM } from '../host/abi/module.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { DetectionEngine, selectRules } from '../host/runtime/detection-engine.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { FieldEvent } from '../host/engine/field-event.js';
import type { SourceEvent } from '../host/engine/source-event.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { encodeProcRecord } from '../host/sources/syscall/procfs.js';
import { figure, median, progress, quantile } from './report.js';
import { watchdogKind } from '../host/runtime/watchdog.js';
import { corpusText } from '../support/corpus.js';
import { procInfo, syscallRecord } from '../support/kernel-records.js';

const S = 'eval';
const EVENTS = 1 << 20;
const BATCH = 4096;
/** Whether modules count the rule figures (RAE_BENCH_RULE_COUNTERS=off: not). */
const COUNTERS = process.env.RAE_BENCH_RULE_COUNTERS !== 'off';
const read = (n: string) => ({ name: n, text: corpusText(n) });

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The scenario's events (exported for profiling tools). */
export function syntheticEventsForProfile(n: number, longBytes = 0): SourceEvent[] {
  return syntheticEvents(n, longBytes);
}

/** The events; with `longBytes`, every command line is padded to that many bytes (distinct per process). */
function syntheticEvents(count = EVENTS, longBytes = 0): SourceEvent[] {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const names = ['bash', 'sh', 'nginx', 'python3', 'node', 'java', 'sshd', 'systemd', 'containerd', 'kubelet', 'cron', 'postgres', 'redis-server', 'apt', 'dpkg', 'cat', 'ls', 'grep', 'curl', 'git', 'runc', 'dockerd', 'sudo', 'su', 'vi'];
  const users = ['root', 'www-data', 'postgres', 'nobody', 'ubuntu'];
  const procs = Array.from({ length: 400 }, (_, i) => {
    const name = pick(names);
    const chain = Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(names));
    return {
      'proc.name': name,
      'proc.exe': `/usr/bin/${name}`,
      'proc.exepath': `/usr/bin/${name}`,
      'proc.cmdline': padTo(`${name} --flag ${i}`, longBytes, i),
      'proc.args': `--flag ${i}`,
      'proc.pid': 1000 + i,
      'proc.vpid': 1000 + i,
      'proc.tty': r() < 0.1 ? 34816 : 0,
      'proc.cwd': '/',
      'proc.pname': chain[0],
      'proc.pcmdline': `${chain[0]} -d`,
      'proc.pexe': `/usr/bin/${chain[0]}`,
      'proc.aname': chain,
      'user.name': pick(users),
      'user.uid': Math.floor(r() * 3) * 1000,
      'user.loginuid': -1,
      'container.id': r() < 0.5 ? 'host' : 'a1b2c3d4e5f6',
      'container.image.repository': r() < 0.5 ? '' : 'docker.io/library/nginx',
      'proc.duration': Math.floor(r() * 1e10),
      'proc.is_exe_upper_layer': false,
      'proc.is_exe_from_memfd': false,
    };
  });
  const dirs = ['/usr/lib/x86_64-linux-gnu', '/proc/self', '/etc', '/dev', '/tmp', '/var/log', '/usr/share', '/home/ubuntu', '/run'];
  const paths = Array.from({ length: 3000 }, (_, i) => `${pick(dirs)}/file${i}.${pick(['so', 'conf', 'log', 'txt', 'py'])}`);
  const sensitive = ['/etc/shadow', '/etc/sudoers', '/etc/pam.conf', '/root/.ssh/authorized_keys', '/etc/gshadow'];
  const others = [
    'connect',
    'ptrace',
    'symlink',
    'symlinkat',
    'chmod',
    'fchmodat',
    'unlinkat',
    'renameat2',
    'setuid',
    'mkdirat',
    'link',
    'linkat',
    'bpf',
    'mount',
    'setns',
    'socket',
    'accept4',
    'sendto',
    'dup2',
    'finit_module',
    'memfd_create',
  ];
  const out: SourceEvent[] = [];
  for (let i = 0; i < count; i++) {
    const x = r();
    const type = x < 0.55 ? 'openat' : x < 0.65 ? 'open' : x < 0.7 ? 'openat2' : x < 0.89 ? 'execve' : x < 0.9 ? 'execveat' : pick(others);
    const p = pick(procs);
    const fields: Record<string, unknown> = { ...p, 'evt.type': type, 'evt.res': r() < 0.9 ? 'SUCCESS' : 'ENOENT', 'evt.rawres': 3 };
    if (type.startsWith('open')) {
      const name = r() < 0.003 ? pick(sensitive) : pick(paths);
      const write = r() < 0.15;
      Object.assign(fields, {
        'fd.name': name,
        'fd.nameraw': name,
        'fd.directory': name.slice(0, name.lastIndexOf('/')),
        'fd.filename': name.slice(name.lastIndexOf('/') + 1),
        'fd.typechar': 'f',
        'fd.type': 'file',
        'fd.num': 3 + (i % 60),
        'evt.is_open_read': !write,
        'evt.is_open_write': write,
      });
    } else if (type === 'connect') {
      Object.assign(fields, {
        'fd.typechar': '4',
        'fd.type': 'ipv4',
        'fd.sip': `10.0.${i % 256}.${(i >> 8) % 256}`,
        'fd.cip': '172.17.0.2',
        'fd.sport': pick([443, 80, 22, 4444, 53]),
        'fd.cport': 40000 + (i % 20000),
        'fd.l4proto': 'tcp',
        'fd.name': `172.17.0.2:40000->10.0.0.1:443`,
      });
    } else if (!type.startsWith('exec')) {
      Object.assign(fields, { 'evt.arg.target': pick(paths), 'evt.arg.linkpath': pick(paths), 'fd.name': pick(paths) });
    }
    out.push({ source: 'syscall', timeNs: BigInt(i), evtType: type, fields: new FieldEvent(fields, { source: 'syscall', timeNs: BigInt(i), num: BigInt(i + 1) }) });
  }
  return out;
}

/** s followed by ` --opt-<i>=value` tokens up to `bytes` (unchanged when 0). */
function padTo(s: string, bytes: number, i: number): string {
  if (bytes <= s.length) return s;
  const token = ` --opt-${i}=value`;
  return (s + token.repeat(Math.ceil((bytes - s.length) / token.length))).slice(0, bytes);
}

async function compileOnce(compiler: RuleCompiler, rules: LoadedRule[]): Promise<{ module: RuleModule; ms: number }> {
  const t0 = performance.now();
  const c = await compiler.compile(rules);
  if (!c.ok) throw new Error(c.errors.map((e) => e.message).join('\n'));
  const m = RuleModule.create(c.compiled, 1000);
  if (!m.ok) throw new Error(m.error.message);
  return { module: m.module, ms: performance.now() - t0 };
}

/** The same event mix as kernel wire records: 400 PROC records, then batches of SYSCALL records. */
function syntheticKernel(count: number): Array<{ bytes: Uint8Array; len: number }> {
  const r = rng(43);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const names = ['bash', 'sh', 'nginx', 'python3', 'node', 'java', 'sshd', 'systemd', 'containerd', 'kubelet', 'cron', 'postgres', 'apt', 'cat', 'curl', 'git', 'sudo'];
  const dirs = ['/usr/lib/x86_64-linux-gnu', '/proc/self', '/etc', '/dev', '/tmp', '/var/log', '/usr/share', '/home/ubuntu', '/run'];
  const paths = Array.from({ length: 3000 }, (_, i) => `${pick(dirs)}/file${i}.${pick(['so', 'conf', 'log', 'txt', 'py'])}`);
  const sensitive = ['/etc/shadow', '/etc/sudoers', '/etc/pam.conf', '/root/.ssh/authorized_keys'];
  const others = ['connect', 'ptrace', 'symlinkat', 'fchmodat', 'unlinkat', 'renameat2', 'setuid', 'mkdirat', 'linkat', 'bpf', 'mount', 'setns', 'socket', 'accept4'];
  const batches: Array<{ bytes: Uint8Array; len: number }> = [];
  let buf = new Uint8Array(BATCH * 320 + 400 * 512);
  let off = 0;
  for (let pid = 1000; pid < 1400; pid++) {
    const comm = pick(names);
    const ppid = pid === 1000 ? 1 : 1000 + Math.floor(r() * (pid - 1000));
    const more = { euid: pid % 3 ? 1000 : 0, args: [Buffer.from(comm), Buffer.from('--flag')], cgroup: Buffer.from(r() < 0.5 ? '/user.slice' : `/kubepods/${'ab'.repeat(32)}`) };
    off += encodeProcRecord(procInfo(pid, ppid, comm, more), buf, off, 1n);
  }
  for (let i = 0; i < count; i++) {
    const x = r();
    const type = x < 0.55 ? 'openat' : x < 0.65 ? 'open' : x < 0.7 ? 'openat2' : x < 0.89 ? 'execve' : x < 0.9 ? 'execveat' : pick(others);
    const path = type.startsWith('open') ? (r() < 0.003 ? pick(sensitive) : pick(paths)) : type.startsWith('exec') ? undefined : pick(paths);
    const pid = 1000 + Math.floor(r() * 400);
    const ret = r() < 0.9 ? 3n : -2n;
    const flags = r() < 0.15 ? 1n : 0n;
    const peer = type === 'connect' ? { port: pick([443, 80, 22, 4444]), addr: 0x0100000a } : undefined;
    const len = syscallRecord(buf, off, { tid: pid, type, path, ret, tsNs: BigInt(i), flags, peer });
    off += len;
    if ((i + 1) % BATCH === 0 || i === count - 1) {
      batches.push({ bytes: buf, len: off });
      buf = new Uint8Array(BATCH * 320);
      off = 0;
    }
  }
  return batches;
}

/** The byte-path figure alone (for profiling tools). */
export function kernelRateForProfile(module: RuleModule): { perS: number; matches: number } {
  return kernelRate(module);
}

/** Events/s of the byte path: kernel records -> thread table + eval records -> evaluate. */
function kernelRate(module: RuleModule): { perS: number; matches: number } {
  const batches = syntheticKernel(EVENTS);
  const ingest = new KernelIngest();
  let matches = 0;
  const pass = () => {
    matches = 0;
    const t = performance.now();
    for (const b of batches) {
      const offsets = ingest.ingest(module, b.bytes, b.len);
      const r = module.evaluateRecords('syscall', offsets.length, true);
      if (r.ok) matches += r.matches.length;
    }
    return performance.now() - t;
  };
  for (let w = 0; w < 2; w++) pass();
  const times = [pass(), pass(), pass()];
  return { perS: EVENTS / (median(times) / 1000), matches };
}

/** Event rates of the compiled evaluator over pre-encoded batches, and the encoder's own rate. */
function wasmRates(module: RuleModule, events: SourceEvent[]): { perS: number; barePerS: number; encodePerS: number; matches: number; batches: Uint8Array[]; counts: number[]; copyNs: number } {
  const batches: Uint8Array[] = [];
  const counts: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += BATCH) {
    const enc = module.encode('syscall', events, i, BATCH);
    batches.push(new Uint8Array(module.memory.buffer, MEM.batchBase, enc.heapEnd - MEM.batchBase).slice());
    counts.push(enc.count);
  }
  const encodePerS = events.length / ((performance.now() - t0) / 1000);
  // The same compiled module without the watchdog, timed in alternation with the guarded one:
  // the difference is what the per-call watchdog (a thread per guarded call) costs right now.
  const unguarded = RuleModule.create(module.compiled, 0);
  if (!unguarded.ok) throw new Error(unguarded.error.message);
  let matches = 0;
  const pass = (m: RuleModule) => {
    const mem = new Uint8Array(m.memory.buffer);
    matches = 0;
    const t = performance.now();
    batches.forEach((b, j) => {
      mem.set(b, MEM.batchBase);
      const r = m.evaluateRecords('syscall', counts[j]!, true);
      if (r.ok) matches += r.matches.length;
    });
    return performance.now() - t;
  };
  for (let w = 0; w < 3; w++) {
    pass(unguarded.module);
    pass(module);
  }
  const bare: number[] = [];
  const times = Array.from({ length: 5 }, () => {
    bare.push(pass(unguarded.module));
    return pass(module);
  });
  const mem = new Uint8Array(module.memory.buffer);
  const copyOnly = () => {
    const t = performance.now();
    for (const b of batches) mem.set(b, MEM.batchBase);
    return performance.now() - t;
  };
  const copyNs = (median(Array.from({ length: 5 }, copyOnly)) * 1e6) / events.length;
  return { perS: events.length / (median(times) / 1000), barePerS: events.length / (median(bare) / 1000), encodePerS, matches, batches, counts, copyNs };
}

/** Events/s of the decoded path (encode + evaluate per batch, as audit and replay events go), watchdog on. */
function decodedRate(module: RuleModule, events: SourceEvent[]): { perS: number; matches: number; referred: number } {
  let matches = 0;
  let referred = 0;
  const pass = () => {
    matches = 0;
    referred = 0;
    const t = performance.now();
    for (let i = 0; i < events.length; i += BATCH) {
      const r = module.evaluate(events.slice(i, i + BATCH), true);
      if (!r.ok) throw new Error(r.error.message);
      matches += r.matches.length;
      referred += r.referred?.length ?? 0;
    }
    return performance.now() - t;
  };
  pass();
  const times = [pass(), pass(), pass()];
  return { perS: events.length / (median(times) / 1000), matches, referred };
}

function interpreterRate(rules: LoadedRule[], events: SourceEvent[]): { perS: number; matches: number } {
  const matcher = new RuleMatcher({ rules }, { ruleMatching: 'first', minPriority: 'Debug' });
  let matches = 0;
  const pass = () => {
    matches = 0;
    const t = performance.now();
    for (const ev of events) matches += matcher.match(ev.source, ev.evtType, ev.fields).length;
    return performance.now() - t;
  };
  pass();
  const times = [pass(), pass(), pass()];
  return { perS: events.length / (median(times) / 1000), matches };
}

/** Swaps through the engine (with a small heap): change-to-live, stall, first batch after the swap, latency while compiling. */
async function swaps(w: { batches: Uint8Array[]; counts: number[] }): Promise<DetectionEngine> {
  progress('swaps through DetectionEngine');
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', hostname: 'bench', onAlert: () => undefined, ruleCounters: COUNTERS });
  const base = read('falco_rules.yaml');
  await engine.load([base]);
  // A running engine has a JIT-warm compile worker: three unmeasured reloads first.
  for (let k = 0; k < 3; k++) await engine.load([base, { name: 'warm.yaml', text: `- rule: warm ${k}\n  desc: d\n  condition: evt.type = openat and fd.name = /warm/${k}\n  output: x\n  priority: INFO\n` }]);
  const live: number[] = [];
  const workerMs: number[] = [];
  const stall: number[] = [];
  const prepare: number[] = [];
  const first: number[] = [];
  const steady: number[] = [];
  const during: number[] = [];
  for (let k = 0; k < 6; k++) {
    const extra = { name: 'extra.yaml', text: `- rule: bench extra ${k}\n  desc: d\n  condition: evt.type = openat and fd.name = /bench/${k}\n  output: x\n  priority: INFO\n` };
    let done = false;
    const pending = engine.load([base, extra]).then((o) => {
      done = true;
      return o;
    });
    let j = 0;
    while (!done) {
      const mod = engine.ruleModule!;
      const t = performance.now();
      new Uint8Array(mod.memory.buffer).set(w.batches[j % w.batches.length]!, MEM.batchBase);
      mod.evaluateRecords('syscall', w.counts[j % w.counts.length]!, true);
      during.push(performance.now() - t);
      j++;
      await new Promise((r) => setImmediate(r));
    }
    const o = await pending;
    if (!o.swapped) throw new Error(JSON.stringify(o.errors));
    live.push(engine.stats.lastChangeToLiveMs);
    stall.push(engine.stats.lastSwapStallMs);
    prepare.push(engine.stats.lastPrepareMs);
    workerMs.push(engine.stats.lastCompileMs + engine.stats.lastWarmMs);
    const mod = engine.ruleModule!;
    const mem = new Uint8Array(mod.memory.buffer);
    for (let b = 0; b < 6; b++) {
      const t = performance.now();
      mem.set(w.batches[b]!, MEM.batchBase);
      mod.evaluateRecords('syscall', w.counts[b]!, true);
      (b === 0 ? first : steady).push(performance.now() - t);
    }
  }
  figure(S, 'change_to_live_ms', median(live), 'ms', {
    samples: live.length,
    max: Math.max(...live),
    worker_ms: median(workerMs),
    note: 'load() of a changed stable ruleset while batches keep flowing: validate (main thread) + codegen + asc + checks + warm (worker) + instantiate, pre-touch, warm-up and swap (main thread)',
  });
  figure(S, 'swap_stall_ms', median(stall), 'ms', { max: Math.max(...stall), note: 'the swap itself between two batches: state carry-over + switch' });
  figure(S, 'swap_prepare_ms', median(prepare), 'ms', { note: 'main-thread instantiate + checks before the swap point (pre-touch and warm-up follow in separate macrotasks)' });
  figure(S, 'first_batch_after_swap_ms', median(first), 'ms', { steady_ms: median(steady), batch: BATCH });
  figure(S, 'batch_latency_during_compile_ms', Math.max(...during), 'ms', { median_ms: median(during), batches: during.length, note: 'max over batches evaluated while the worker compiled (2 shared cores)' });
  // The worst of some 2,000 batches is one preemption on a loaded machine (a batch of 0.45 ms
  // median read 85 to 177 ms, with the same head); the 99th percentile is the tail that code moves.
  figure(S, 'batch_latency_during_compile_p99_ms', quantile(during, 0.99), 'ms', { p90_ms: quantile(during, 0.9), note: '99th percentile of the same batches' });
  return engine;
}

/** Runs the scenario. */
export async function run(): Promise<void> {
  const stable = loadRules([read('falco_rules.yaml')]);
  const rules = selectRules(stable.ruleset.rules, 'Debug');
  progress(`${rules.length} enabled rules of falco_rules.yaml`);
  const compiler = new RuleCompiler({ counters: COUNTERS });
  if (!COUNTERS) progress('rule figures off (RAE_BENCH_RULE_COUNTERS=off)');
  const cold = await compileOnce(compiler, rules);
  figure(S, 'stable_compile_cold_ms', cold.ms, 'ms', { note: 'first compile in a fresh worker (compiler import + JIT cold)' });
  const corpusSys = loadRules(['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml'].map(read)).ruleset.rules;
  const corpusAudit = loadRules([read('k8s_audit_rules.yaml')]).ruleset.rules;
  const corpusTimes: number[] = [];
  for (let k = 0; k < 3; k++) {
    // a different rule order each time, so the module cache does not answer
    const all = [...corpusSys, ...corpusAudit];
    const c = await compiler.compile([...all.slice(k), ...all.slice(0, k)]);
    if (!c.ok) throw new Error(c.errors.map((e) => e.message).join('\n'));
    corpusTimes.push(c.compiled.compileMs);
  }
  figure(S, 'corpus_compile_ms', median(corpusTimes), 'ms', { rules: corpusSys.length + corpusAudit.length, note: 'all rules of the four corpus files in one module: codegen + asc + checks, warm worker, median of 3' });

  // Swap figures first, while the process heap is small (1M event objects make GC pauses of
  // tens of ms that would land on the swap path).
  const small = syntheticEvents(8 * BATCH);
  const smallBatches = { batches: [] as Uint8Array[], counts: [] as number[] };
  for (let i = 0; i < small.length; i += BATCH) {
    const enc = cold.module.encode('syscall', small, i, BATCH);
    smallBatches.batches.push(new Uint8Array(cold.module.memory.buffer, MEM.batchBase, enc.heapEnd - MEM.batchBase).slice());
    smallBatches.counts.push(enc.count);
  }
  const engine = await swaps(smallBatches);
  progress(`generating ${EVENTS} events`);
  const events = syntheticEvents();
  progress('wasm: encoding batches, warming, 5 timed passes');
  const w = wasmRates(cold.module, events);
  figure(S, 'wasm_events_per_s', w.perS, 'events/s', { batch: BATCH, events: EVENTS, rules: rules.length, matches: w.matches, note: 'binary batches copied into linear memory + one evaluate per batch, watchdog on' });
  figure(S, 'wasm_no_watchdog_events_per_s', w.barePerS, 'events/s', {
    watchdog_us_per_batch: ((1e6 / w.perS - 1e6 / w.barePerS) * BATCH).toFixed(1),
    watchdog: watchdogKind(),
    note: 'the same module and batches without the watchdog, passes alternated with the guarded ones (native watchdog: one long-lived thread; vm fallback: one thread per guarded call, its cost grows with machine load)',
  });
  figure(S, 'wasm_ns_per_event', 1e9 / w.perS, 'ns', { batch_copy_ns: w.copyNs, record_bytes: cold.module.stride('syscall'), note: 'of which batch_copy_ns is copying records + strings into linear memory' });
  figure(S, 'encode_events_per_s', w.encodePerS, 'events/s', { note: 'JS field objects -> eval records (audit/replay path), not part of wasm_events_per_s' });
  progress('kernel byte path: 1M syscall records');
  const k = kernelRate(cold.module);
  figure(S, 'kernel_path_events_per_s', k.perS, 'events/s', { matches: k.matches, note: 'kernel wire records -> thread table + eval records (host, no per-event objects) -> one evaluate per batch of 4096' });
  progress('interpreter: 3 timed passes');
  const it = interpreterRate(rules, events);
  figure(S, 'interpreter_events_per_s', it.perS, 'events/s', { matches: it.matches });
  figure(S, 'wasm_vs_interpreter', w.perS / it.perS, 'x', { agree: w.matches === it.matches });

  // Long values (compared whole, never cut): every command line 64 KiB, against the same events with short ones.
  progress('long strings: 16384 events with a 64 KiB proc.cmdline vs short, decoded path');
  const LONG = 64 * 1024;
  const shortEvents = syntheticEvents(4 * BATCH);
  const longEvents = syntheticEvents(4 * BATCH, LONG);
  const ds = decodedRate(cold.module, shortEvents);
  const dl = decodedRate(cold.module, longEvents);
  figure(S, 'decoded_short_events_per_s', ds.perS, 'events/s', { events: shortEvents.length, matches: ds.matches, note: 'SourceEvents -> encode + evaluate per batch of 4096 (the audit/replay path), watchdog on' });
  figure(S, 'decoded_long_events_per_s', dl.perS, 'events/s', {
    events: longEvents.length,
    field_bytes: LONG,
    matches: dl.matches,
    referred: dl.referred,
    mb_per_s: ((dl.perS * LONG) / 2 ** 20).toFixed(0),
    note: 'the same events with every proc.cmdline 64 KiB (400 distinct values), compared whole',
  });
  figure(S, 'decoded_long_vs_short', ds.perS / dl.perS, 'x', { note: 'how many times slower an event with a 64 KiB field is' });
  const il = interpreterRate(rules, longEvents);
  figure(S, 'interpreter_long_events_per_s', il.perS, 'events/s', { matches: il.matches, agree: il.matches === dl.matches });

  const region = new Uint8Array(MEM.stateSize);
  const t0 = performance.now();
  for (let k = 0; k < 10; k++) new Uint8Array(engine.ruleModule!.memory.buffer).set(region, MEM.stateBase);
  figure(S, 'state_copy_ms', (performance.now() - t0) / 10, 'ms', { bytes: MEM.stateSize, note: 'carrying a non-empty state region over (skipped while it is empty)' });
  figure(S, 'rss_mb', process.memoryUsage().rss / 2 ** 20, 'MiB', { note: 'whole bench process incl. 1M event objects and encoded batches' });
  await engine.close();
  await compiler.close();
}
