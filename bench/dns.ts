// Benchmark `dns`: what endpoint names (fd.sip.name ...) cost. The resolver runs off the event
// path (host/sources/dns/resolver.ts); per event, a translator filling an fd.*ip.name slot does
// one binary search of the DNS table for an event with an IP end. Figures: table_write_ms (the
// host rewriting the table once, the work of one changed answer, for every name of the three
// built-in syscall sets with 4 addresses each), and the kernel byte path (C translator +
// evaluate, batches of 4096) over 262,144 connect records to 1,024 addresses, with one rule
// comparing fd.sip.name against 256 names (the table full: names x 4 addresses) and with a rule
// reading no name: the difference is the lookup, the name's slot and its set test.
import { loadRules } from '../host/engine/index.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { selectRules } from '../host/runtime/detection-engine.js';
import { KernelIngest } from '../host/sources/syscall/ingest.js';
import { HDR, KIND, SIZES, SYSCALL } from '../host/abi/records.js';
import { syscallNr } from '../host/sources/syscall/syscalls.js';
import { DnsTable, domainNames } from '../host/sources/dns/index.js';
import { corpusText } from '../support/corpus.js';
import { figure, median, progress } from './report.js';

const S = 'dns';
const EVENTS = 1 << 18;
const BATCH = 4096;

/** The 4 addresses of name i: 10.(i>>6).(i&63)*4+k. */
const addressesOf = (i: number) => Array.from({ length: 4 }, (_, k) => `10.${i >> 6}.${(i & 63) * 4 + k}.1`);

/** Batches of connect records, each to one of `addrs` (IPv4 numbers, network order in memory). */
function connects(addrs: readonly number[]): Array<{ bytes: Uint8Array; len: number }> {
  const out: Array<{ bytes: Uint8Array; len: number }> = [];
  const len = (SIZES.syscall + 7) & ~7;
  for (let i = 0; i < EVENTS; i += BATCH) {
    const buf = new Uint8Array(BATCH * len);
    const dv = new DataView(buf.buffer);
    for (let j = 0; j < BATCH; j++) {
      const off = j * len;
      dv.setBigUint64(off + HDR.ts_ns, BigInt(i + j), true);
      dv.setUint32(off + HDR.len, len, true);
      dv.setUint16(off + HDR.kind, KIND.SYSCALL, true);
      dv.setUint16(off + HDR.nr, syscallNr('connect')!, true);
      dv.setUint32(off + HDR.pid, 1, true);
      dv.setUint32(off + HDR.tid, 1, true);
      dv.setUint16(off + SYSCALL.peer, 2, true);
      dv.setUint16(off + SYSCALL.peer + 2, 443, true);
      dv.setUint32(off + SYSCALL.peer + 8, addrs[((i + j) * 7919) % addrs.length]!, false);
    }
    out.push({ bytes: buf, len: BATCH * len });
  }
  return out;
}

async function moduleOf(condition: string): Promise<RuleModule> {
  const loaded = loadRules([{ name: 'dns-bench.yaml', text: `- rule: r\n  desc: d\n  condition: ${condition}\n  output: x\n  priority: NOTICE\n` }]);
  if (!loaded.ok) throw new Error('bench rules do not load');
  const compiler = new RuleCompiler();
  try {
    const c = await compiler.compile(selectRules(loaded.ruleset.rules, 'Debug'));
    if (!c.ok) throw new Error(c.errors[0]!.message);
    const m = RuleModule.create(c.compiled);
    if (!m.ok) throw new Error(m.error.message);
    return m.module;
  } finally {
    await compiler.close();
  }
}

/** Events/s of ingest + evaluate over the batches (median of 5 passes after 2 warm-ups), and the matches of a pass. */
function rate(m: RuleModule, ki: KernelIngest, batches: Array<{ bytes: Uint8Array; len: number }>): { perS: number; matches: number } {
  let matches = 0;
  const pass = () => {
    matches = 0;
    const t = performance.now();
    for (const b of batches) {
      const offsets = ki.ingest(m, b.bytes, b.len);
      const r = m.evaluateRecords('syscall', offsets.length, true);
      if (r.ok) matches += r.matches.length;
    }
    return performance.now() - t;
  };
  for (let w = 0; w < 2; w++) pass();
  return { perS: EVENTS / (median(Array.from({ length: 5 }, pass)) / 1000), matches };
}

export async function run(): Promise<void> {
  const sets = ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) }));
  const builtIn = domainNames(loadRules(sets).ruleset.rules);
  progress(`${builtIn.length} domain names in the built-in syscall sets`);
  const table = new DnsTable();
  table.bind(new WebAssembly.Memory({ initial: 512, maximum: 512 }), builtIn);
  builtIn.forEach((n, i) => table.set(n, addressesOf(i)));
  const writes = Array.from({ length: 150 }, (_, k) => {
    const t = performance.now();
    table.set(builtIn[k % builtIn.length]!, addressesOf(k + 1000));
    return performance.now() - t;
  });
  figure(S, 'table_write_ms', median(writes.slice(50)), 'ms', { names: builtIn.length, addresses: builtIn.length * 4, note: 'one changed answer: the whole table rewritten (host, between batches), median of 100 after 50 warm-up' });

  const names = Array.from({ length: 256 }, (_, i) => `n${i}.bench.test`);
  const all = names.flatMap((_, i) => addressesOf(i));
  const nums = all.map((a) => a.split('.').reduce((x, o) => x * 256 + Number(o), 0));
  const batches = connects(nums);
  const byName = await moduleOf(`evt.type = connect and fd.sip.name in (${names.join(', ')})`);
  const plain = await moduleOf('evt.type = connect and fd.sport = 443');
  const ki = new KernelIngest({ hostname: 'bench' });
  if (!ki.native) progress('the addon translator does not load: the TypeScript translator is measured');
  ki.dns.bind(byName.memory, domainNames(byName.rules));
  names.forEach((n, i) => ki.dns.set(n, addressesOf(i)));
  const kiPlain = new KernelIngest({ hostname: 'bench' });
  for (let round = 0; round < 2; round++) {
    const a = rate(plain, kiPlain, batches);
    const n = rate(byName, ki, batches);
    figure(S, 'kernel_path_no_name_events_per_s', a.perS, 'events/s', { round, matches: a.matches, note: 'connect records, rule on evt.type and fd.sport only' });
    figure(S, 'kernel_path_by_name_events_per_s', n.perS, 'events/s', {
      round,
      matches: n.matches,
      names: names.length,
      table_entries: all.length,
      note: 'the same records, rule on fd.sip.name in (256 names), the DNS table holding their 1,024 addresses',
    });
    figure(S, 'name_ns_per_event', 1e9 / n.perS - 1e9 / a.perS, 'ns', { round, note: 'by name minus without: the lookup, the name slot and its set test, per connect event (noise when small)' });
  }
}
