// Container starts judged before their container's metadata came (host/runtime/late-starts.ts and
// kernel-path.ts judgeLate), with a real engine, the real kernel ingest and wire records: the
// init's exec (vpid 1) of a container the table does not know yet is judged at once (metadata
// missing), then once more when the container's record is learned: the rules that did not fire
// the first time fire, with the exec's own time and the process as it was then (it exec'd again
// and exited meanwhile), those that fired do not fire again, and a second learn judges nothing.
// The held starts are bounded by count and age, each drop counted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXIT, HDR, KIND, SIZES, XF } from '../../host/abi/records.js';
import type { Alert } from '../../host/output/alert.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { newEngineStats } from '../../host/runtime/engine-types.js';
import { LateStarts, type HeldStart } from '../../host/runtime/late-starts.js';
import type { ContainerRecord } from '../../host/sources/container/index.js';
import { KernelIngest } from '../../host/sources/syscall/ingest.js';
import { encodeProcRecord } from '../../host/sources/syscall/procfs.js';
import { procInfo, syscallRecord } from '../../support/kernel-records.js';
import { NGINX } from '../sources/container/record-fixture.js';

const ID = 'e84d7d08813d';
const CGROUP = `/kubepods/besteffort/pod0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10/${ID}${'a'.repeat(52)}`;
const RULES = [
  {
    name: 'r.yaml',
    text: `- rule: Init exec
  desc: fires without metadata
  condition: evt.type in (execve, execveat) and proc.vpid=1 and container.id != host
  output: init %proc.name
  priority: NOTICE
- rule: Privileged start
  desc: needs the metadata
  condition: evt.type in (execve, execveat) and proc.vpid=1 and container.id != host and container.privileged=true
  output: privileged %proc.name in %container.name of %k8s.ns.name
  priority: WARNING
`,
  },
];
const RECORD: ContainerRecord = { ...NGINX, id: ID, fullId: `${ID}${'a'.repeat(52)}`, name: 'priv', mounts: [], pod: { ...NGINX.pod!, name: 'p', namespace: 'late' } };
const EPOCH = 1_000_000_000_000n;

/** An EXEC record of `pid` running `comm` as its pid namespace's init, then its execve (at `ts`); returns the bytes. */
function initExec(buf: Uint8Array, off: number, pid: number, comm: string, ts: bigint): number {
  const len = encodeProcRecord(procInfo(pid, 1, comm, { vpid: 1, cgroup: Buffer.from(CGROUP), startNs: ts }), buf, off, ts);
  new DataView(buf.buffer, off).setUint16(HDR.kind, KIND.EXEC, true);
  return len + syscallRecord(buf, off + len, { tid: pid, type: 'execve', ret: 0n, tsNs: ts });
}

/** An engine over a kernel ingest whose container table calls it back as rae run wires it (start-engine.ts). */
async function engine(ruleMatching: 'all' | 'first' = 'all', rules = RULES) {
  const alerts: Alert[] = [];
  const kernel = new KernelIngest({ hostname: 'h' });
  const e = new DetectionEngine({ ruleMatching, minPriority: 'Debug', hostname: 'h', kernel, onAlert: (a) => alerts.push(a) });
  kernel.containers.onLearned = (id) => e.containerLearned(id);
  assert.ok((await e.load(rules)).swapped);
  return { e, kernel, alerts, rules: () => alerts.map((a) => `${a.rule}: ${a.message.split(' container_id=')[0]}`) };
}

test('a start judged without its metadata is judged again when it comes: only the rules that did not fire, once, with the time and process of the exec', async () => {
  const { e, kernel, alerts, rules } = await engine();
  const buf = new Uint8Array(1 << 16);
  let n = initExec(buf, 0, 700, 'sleep', 5_000n);
  assert.is(e.evaluateKernel(buf, n, EPOCH), 1);
  assert.equal(rules(), ['Init exec: init sleep']);
  // the init exec'd again, then exited, before the metadata came: each exec is judged as it was
  n = initExec(buf, 0, 700, 'nginx', 7_000n);
  const exit = new DataView(buf.buffer, n);
  exit.setUint32(HDR.len, SIZES.exit, true);
  exit.setUint16(HDR.kind, KIND.EXIT, true);
  exit.setUint32(HDR.pid, 700, true);
  exit.setUint32(HDR.tid, 700, true);
  exit.setUint32(EXIT.xflags, XF.GROUP_DEAD, true);
  assert.is(e.evaluateKernel(buf, n + SIZES.exit, EPOCH), 1);
  assert.is(e.stats.lateStartsHeld, 2);
  kernel.containers.learn(RECORD);
  assert.equal(rules().slice(2), ['Privileged start: privileged sleep in priv of late', 'Privileged start: privileged nginx in priv of late']);
  assert.equal(
    alerts.slice(2).map((a) => a.timeNs),
    [EPOCH + 5_000n, EPOCH + 7_000n],
  );
  assert.is(alerts[2]!.outputFields['container.name'], 'priv');
  assert.is(alerts[2]!.outputFields['k8s.ns.name'], 'late');
  kernel.containers.learn(RECORD);
  assert.is(alerts.length, 4, 'a second learn judges nothing again');
  assert.equal([e.stats.lateStartsJudged, e.stats.lateStartsDropped], [2, 0]);
  // a start of a container whose metadata is there is judged once, with it
  n = initExec(buf, 0, 701, 'sh', 9_000n);
  assert.is(e.evaluateKernel(buf, n, EPOCH), 2);
  assert.is(e.stats.lateStartsHeld, 2);
  await e.close();
});

test('ruleMatching first: a late start that a rule fired for is not judged again; one no rule fired for is', async () => {
  // Init exec fires only for sleep
  const { e, kernel, rules } = await engine('first', [{ name: 'r.yaml', text: RULES[0]!.text.replace('container.id != host\n  output: init', 'container.id != host and proc.name=sleep\n  output: init') }]);
  const buf = new Uint8Array(1 << 16);
  let n = initExec(buf, 0, 700, 'sleep', 5_000n);
  n += initExec(buf, n, 702, 'nginx', 6_000n);
  assert.is(e.evaluateKernel(buf, n, EPOCH), 1);
  kernel.containers.learn(RECORD);
  assert.equal(rules(), ['Init exec: init sleep', 'Privileged start: privileged nginx in priv of late']);
  await e.close();
});

test('held starts are bounded by count (the oldest goes) and age, every drop counted', () => {
  const stats = newEngineStats('wasm');
  let now = 0;
  const late = new LateStarts(stats, { count: 2, ageMs: 1000 }, () => now);
  const start = (key: string): HeldStart => ({ key, fields: {}, evtType: 'execve', timeNs: 0n, num: 1n, fired: new Set() });
  late.hold(start('a'));
  late.hold(start('b'));
  late.hold(start('c'));
  assert.equal([stats.lateStartsHeld, stats.lateStartsDropped, late.size], [3, 1, 2]);
  assert.equal(late.take('a'), [], 'the oldest went');
  now = 600;
  late.hold(start('d'));
  now = 1200;
  assert.equal(late.take('b'), [], 'b is older than the age limit');
  assert.equal(stats.lateStartsDropped, 3, 'b and c aged out');
  assert.equal(
    late.take('d').map((s) => s.key),
    ['d'],
  );
  assert.is(late.size, 0);
});

test.run();
