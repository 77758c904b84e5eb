// The webhook's two decoders (webhook.decoder: bytes | objects) side by side on the same bodies:
// the same refusals, skipped and truncated items, event times and numbers, the same value of
// every k8s_audit field (each ka.*/jevt.* field of the table, with the arguments rules use), and
// the same string values copied straight into memory (copyText) or found in the body's bytes
// (EventBytes.texts) as read, and
// the same alerts (rule, output, fields) from a DetectionEngine with the upstream
// k8s_audit_rules.yaml. Bodies: the orchestrator audit samples of the corpus, hand-written edge
// cases (escapes, unicode, \u0000, huge strings, missing members, containers and numbers where
// strings are expected, duplicate and escaped names, deep nesting, bad bodies) and corpus events
// with values swapped for such edge values by a seeded generator. On each body the bytes decoder's
// EventList walk in WebAssembly gives exactly what the JavaScript walk gives (list-walk.test.ts).
process.env.TZ = 'UTC';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BoundField, fieldTable, type FieldRef, type LoadedRule, parseOutput, type RawValue, type SourceEvent, TEXT_COPY } from '../../../host/engine/index.js';
import { alertJson } from '../../../host/output/alert.js';
import { AlertPlan } from '../../../host/output/from-match.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { type AuditDecoder, decodeAuditEvents, type SourceDecodeResult } from '../../../host/sources/audit/batch-bytes.js';
import { startTestWebhook } from '../../../support/audit-webhook.js';
import { corpusPath, K8SAUDIT_SAMPLES } from '../../../support/corpus.js';
import { walksSame } from '../../helpers/list-walks.js';

const LIMITS = { maxEventBytes: 256 * 1024, maxEventDepth: 300 };
const ARGS = [undefined, '', '0', '1', '7', '-1', 'command', 'watch', '/stage', '/user/groups/0', '/requestObject/spec/containers/0/image', '/objectRef', '/a~1b', '/items/+1', '/etc', '/var/run/*'];

/** Every k8s_audit field with each argument it takes (evt.* generic fields too). */
const REFS: FieldRef[] = fieldTable('k8s_audit').flatMap((def) =>
  (def.arg === 'none' ? [undefined] : ARGS).map((arg) => ({ kind: 'field', def, arg, canonical: arg === undefined ? def.name : `${def.name}[${arg}]`, type: def.type, isList: def.isList }) as FieldRef),
);

/** Corpus items, one per line or document. */
function corpusItems(): unknown[] {
  const files = readdirSync(K8SAUDIT_SAMPLES).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 40, `the k8s audit samples are missing from ${K8SAUDIT_SAMPLES} (${files.length} files)`);
  return files.sort().flatMap((f) => {
    const text = readFileSync(`${K8SAUDIT_SAMPLES}/${f}`, 'utf8');
    const docs = text.split('\n').filter((l) => l.trim() !== '');
    return docs.flatMap((l) => {
      const d = JSON.parse(l) as { kind?: string; items?: unknown[] };
      return d.kind === 'EventList' ? d.items! : [d];
    });
  });
}

const decode = (body: Buffer, decoder: AuditDecoder, limits = LIMITS) => decodeAuditEvents(body, limits, decoder, 1n);
const fieldValues = (ev: SourceEvent) => REFS.map((r) => [r.canonical, ev.fields.field(r)]);

/** Fields a byte event copied straight into memory (copyText, what the batch encoder writes) in all. */
let copied = 0;
const scratch = new Uint8Array(256 * 1024);

/** copyText of a byte event gives each field's value as field() does: its UTF-8 bytes, missing, or "read it with field()". */
function copiesSame(ev: SourceEvent, what: string): void {
  for (const r of REFS) {
    const n = ev.fields.copyText!(r, scratch, 8, scratch.length);
    const v = ev.fields.field(r);
    if (n === TEXT_COPY.missing) assert.is(v, undefined, `${what} ${r.canonical}: copyText says missing`);
    if (n < 0) continue;
    copied++;
    assert.type(v, 'string', `${what} ${r.canonical}: copyText copied a value that is not a string`);
    assert.equal(Buffer.from(scratch.subarray(8, 8 + n)), Buffer.from(v as string), `${what} ${r.canonical}: copied bytes`);
    if (n > 0) assert.is(ev.fields.copyText!(r, scratch, 8, 8 + n - 1), TEXT_COPY.noRoom, `${what} ${r.canonical}: no room`);
  }
}

/** Fields a byte event found as text in its body's bytes (EventBytes.texts) in all, and those of them copyText does not copy. */
let found = 0;
let compact = 0;
/** Fields texts() told missing by a member's key alone (a list field on an event without the member). */
let listsMissing = 0;

/** EventBytes.texts gives each field's value as field() and copyText() do: where its UTF-8 bytes lie in the body, missing, or "copy or read it another way". */
function textsSame(ev: SourceEvent, what: string): void {
  const bytes = ev.fields.bytes!;
  const keys = Int32Array.from(REFS, (r) => ev.fields.readers!.textKey!(r));
  const out = new Int32Array(2 * keys.length).fill(7);
  bytes.texts(keys, out);
  REFS.forEach((r, k) => {
    const start = out[2 * k]!;
    const v = ev.fields.field(r);
    if (start === TEXT_COPY.missing) {
      assert.is(v, undefined, `${what} ${r.canonical}: texts says missing`);
      if (keys[k]! < -1) listsMissing++;
    } else if (start !== TEXT_COPY.other) {
      assert.ok(start >= bytes.at && start + out[2 * k + 1]! < bytes.end, `${what} ${r.canonical}: found within the event`);
      found++;
      const text = Buffer.from(bytes.body.subarray(start, start + out[2 * k + 1]!));
      assert.equal(text, Buffer.from(v as string), `${what} ${r.canonical}: found bytes`);
      // copyText copies strings and integers; texts also finds true, false, null and compact objects and arrays.
      const n = ev.fields.copyText!(r, scratch, 8, scratch.length);
      if (n >= 0) assert.equal(Buffer.from(scratch.subarray(8, 8 + n)), text, `${what} ${r.canonical}: found what copyText copies`);
      else compact++;
    }
  });
}

/** One BoundField per field, kept across the events of both decoders (as the encoder's slots and the alert plans keep theirs). */
const BOUND = REFS.map((r) => new BoundField(r));
const scratch2 = new Uint8Array(256 * 1024);

/** A field's read resolved once (BoundField) gives what field() and copyText() give, whichever decoder's event came before. */
function boundSame(ev: SourceEvent, what: string): void {
  BOUND.forEach((b, k) => {
    const r = REFS[k]!;
    assert.equal(b.read(ev.fields), ev.fields.field(r), `${what} ${r.canonical}: read once resolved`);
    const n = b.copy(ev.fields, scratch, 8, scratch.length);
    assert.is(n, ev.fields.copyText === undefined ? TEXT_COPY.other : ev.fields.copyText(r, scratch2, 8, scratch2.length), `${what} ${r.canonical}: copy once resolved`);
    if (n > 0) assert.equal(scratch.subarray(8, 8 + n), scratch2.subarray(8, 8 + n), `${what} ${r.canonical}: bytes copied once resolved`);
  });
}

/** Both decoders on one body: the same outcome, event for event and field for field. */
function same(body: Buffer, what: string, limits = LIMITS): { objects: SourceDecodeResult; bytes: SourceDecodeResult } {
  // The EventList walk the bytes decoder uses is the WebAssembly one: the JavaScript one gives the same on every body.
  walksSame(body, what);
  const objects = decode(body, 'objects', limits);
  const bytes = decode(body, 'bytes', limits);
  if (!objects.ok || !bytes.ok) {
    assert.equal(bytes, objects, `${what}: refusal`);
    return { objects, bytes };
  }
  assert.equal(bytes.skipped, objects.skipped, `${what}: skipped`);
  assert.equal(bytes.truncated, objects.truncated, `${what}: truncated`);
  assert.is(bytes.events.length, objects.events.length, `${what}: events`);
  objects.events.forEach((o, i) => {
    const b = bytes.events[i]!;
    assert.is(b.timeNs, o.timeNs, `${what} #${i}: time`);
    assert.equal(fieldValues(b), fieldValues(o), `${what} #${i}: fields`);
    if (b.fields.copyText) copiesSame(b, `${what} #${i}`);
    if (b.fields.bytes) textsSame(b, `${what} #${i}`);
    boundSame(o, `${what} #${i} objects`);
    boundSame(b, `${what} #${i} bytes`);
  });
  return { objects, bytes };
}

const list = (items: unknown[]) => Buffer.from(JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', items }));

test('decoders: the corpus gives the same events and field values, read from the bytes', () => {
  const items = corpusItems();
  const { bytes } = same(list(items), 'corpus');
  assert.ok(bytes.ok && bytes.events.length > 40, 'corpus events');
  // Not vacuous: the bytes decoder's events are its own, not the object path's.
  const kinds = new Set(bytes.ok ? bytes.events.map((e) => e.fields.constructor.name) : []);
  assert.equal([...kinds], ['ByteAuditFields']);
  assert.ok(copied > 400, `${copied} values copied as bytes`);
  assert.ok(found > 400 && compact > 40, `${found} values found as bytes, ${compact} of them not strings or integers`);
  assert.ok(listsMissing > 400, `${listsMissing} list fields found missing by their member`);
  for (const [i, item] of items.entries()) same(Buffer.from(JSON.stringify(item)), `corpus item ${i} alone`);
});

test('decoders: the same alerts (rule, output, fields) for the corpus and generated events', async () => {
  const items = [...corpusItems(), ...generated(7, 400)];
  const alerts: Record<AuditDecoder, string[]> = { bytes: [], objects: [] };
  for (const decoder of ['objects', 'bytes'] as const) {
    const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'test-node', onAlert: (a) => alerts[decoder].push(alertJson(a)) });
    const loaded = await engine.load([{ name: 'k8s_audit_rules.yaml', text: readFileSync(corpusPath('k8s_audit_rules.yaml'), 'utf8') }]);
    assert.ok(loaded.swapped);
    const decoded = decode(list(items), decoder);
    assert.ok(decoded.ok);
    if (decoded.ok) engine.evaluate(decoded.events);
    await engine.close();
  }
  assert.ok(alerts.objects.length > 30, `${alerts.objects.length} alerts`);
  assert.equal(alerts.bytes, alerts.objects);
});

test('alert plans: one plan reads each event through its own accessor (either decoder, a plain one), each field by its argument', () => {
  const out = parseOutput('k8s_audit', 'verb=%jevt.value[/verb] user=%jevt.value[/user/username] [%6ka.verb] [%3ka.target.resource] code=%ka.response.code');
  const extra = parseOutput('k8s_audit', '%ka.user.name %jevt.value[/objectRef/resource] %ka.verb %ka.req.pod.containers.image');
  if (!out.ok || !extra.ok) throw new Error('parse');
  const rule = { name: 'r', priority: 'Warning', source: 'k8s_audit', tags: [], output: out.tokens } as unknown as LoadedRule;
  const plan = new AlertPlan(
    rule,
    extra.tokens.filter((t) => t.kind === 'field'),
  );
  const item = { auditID: 'a', kind: 'Event', stage: 'ResponseComplete', verb: 'create', user: { username: 'alice' }, objectRef: { resource: 'pods' }, responseStatus: { code: 201 }, stageTimestamp: '2024-01-01T00:00:00Z' };
  const keys = ['jevt.value[/verb]', 'jevt.value[/user/username]', 'ka.verb', 'ka.target.resource', 'ka.response.code', 'ka.user.name', 'jevt.value[/objectRef/resource]', 'ka.req.pod.containers.image'];
  const decoded = { bytes: decode(list([item]), 'bytes'), objects: decode(list([item]), 'objects') };
  const plainValues: Record<string, RawValue> = { 'jevt.value[/verb]': 'get', 'ka.verb': 'get', 'ka.req.pod.containers.image': ['nginx', 'redis'] };
  const plain: SourceEvent = { source: 'k8s_audit', timeNs: 0n, fields: { field: (ref) => plainValues[ref.canonical] } };
  for (const which of ['bytes', 'objects', 'plain', 'bytes'] as const) {
    const d = which === 'plain' ? undefined : decoded[which];
    if (d !== undefined && !d.ok) throw new Error(`${which}: ${d.message}`);
    const ev = d === undefined ? plain : d.events[0]!;
    const a = plan.alert(ev, 'h');
    assert.equal(Object.keys(a.outputFields), keys, `${which}: output_fields keys in order`);
    if (which === 'plain') {
      assert.is(a.message, 'verb=get user=<NA> [get   ] [<NA] code=<NA>', which);
      assert.equal(Object.values(a.outputFields), ['get', null, 'get', null, null, null, null, ['nginx', 'redis']], which);
    } else {
      assert.is(a.message, 'verb=create user=alice [create] [pod] code=201', which);
      assert.equal(Object.values(a.outputFields), ['create', 'alice', 'create', 'pods', '201', 'alice', 'pods', null], which);
    }
  }
});

/** Edge values for a field that rules read as a string. */
const EDGE: unknown[] = [
  'tab\there "quoted" back\\slash /slash \b\f\n\r',
  'caf\u00e9 \u65e5\u672c \ud83d\ude00',
  'nul\u0000inside',
  '\ud800 lone surrogate',
  'x'.repeat(100_000),
  '',
  0,
  -0,
  1.5,
  1e21,
  2 ** 53 + 2,
  true,
  false,
  null,
  [],
  ['a', 1, null, { b: 'c' }],
  {},
  { nested: { deeper: ['x', { y: 2 }] } },
  'pods',
  'system:anonymous',
];

/** A deterministic generator (Numerical Recipes' linear congruential one, good enough to pick values). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 4294967296;
  };
}

/** Corpus events with values replaced by edge values or deleted, at every depth. */
function generated(seed: number, count: number): unknown[] {
  const rnd = random(seed);
  const base = corpusItems();
  const mutate = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null) return rnd() < 0.15 ? EDGE[Math.floor(rnd() * EDGE.length)] : v;
    if (Array.isArray(v)) return v.map((x) => mutate(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const r = rnd();
      if (depth > 0 && r < 0.05) continue; // a missing member
      out[k] = r < 0.1 ? EDGE[Math.floor(rnd() * EDGE.length)] : mutate(x, depth + 1);
    }
    return out;
  };
  return Array.from({ length: count }, (_, i) => {
    const ev = mutate(base[i % base.length], 0) as Record<string, unknown>;
    return { ...ev, auditID: `gen-${i}` };
  });
}

test('decoders: generated events (edge values at every depth) read the same', () => {
  const items = generated(11, 600);
  same(list(items), 'generated');
  for (let i = 0; i < 60; i++) same(Buffer.from(JSON.stringify(items[i])), `generated item ${i} alone`);
});

const EV = '{"auditID":"a1","stage":"ResponseComplete","verb":"get","stageTimestamp":"2026-01-02T03:04:05.123456789Z","user":{"username":"u"},"objectRef":{"resource":"pods","name":"p"}}';

test('decoders: hand-written bodies (escapes, duplicates, numbers, shapes, refusals) read the same', () => {
  const bodies = [
    `{"kind":"EventList","items":[${EV},${EV.replace('"verb":"get"', '"verb":"g\\u0065t","ve\\u0072b":"list"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"get"', '"get","verb":"watch"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"get"', '1.0E+2')},${EV.replace('"get"', '-0')},${EV.replace('"get"', '1e400')},${EV.replace('"get"', '123456789012345678901234567890')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"u"', '"\\u0000\\ud83d\\ude00\\n"')},${EV.replace('"pods"', '["pods"]')},${EV.replace('"pods"', '{"a":[1,{"b":null}]}')}]}`,
    `{"kind":"EventList","items":[1,"s",null,[],{},{"auditID":5},{"auditID":null},${EV}]}`,
    `{"kind":"EventList","items":[${EV.replace('"auditID":"a1"', '"\\u0061uditID":"a1"')}]}`,
    ` \n{"kind":"EventList","items":[${EV}],"items":[${EV},${EV}]}\t`,
    `{"kin\\u0064":"EventList","items":[${EV}]}`,
    `{"kind":"Event\\u004cist","items":[${EV}]}`,
    `{"kind":"EventList","items":{}}`,
    `{"kind":"EventList"}`,
    `{"kind":"EventList","items":[]}`,
    EV,
    `{"kind":"Event","auditID":"x"}`,
    `{"kind":"Event"}`,
    '[]',
    '"EventList"',
    '',
    '{',
    `{"kind":"EventList","items":[${EV}],}`,
    `{"kind":"EventList","items":[${EV}]} x`,
    '{"a":"raw\ttab"}',
    '{"a":01}',
    '{"a":1.}',
    '{"a":-}',
    '{"a":"\\x"}',
    '{"a":"\\u12g4"}',
    '{"a":tru}',
    '\ufeff{}',
    '{"a":1 2}',
    '{"a" 1}',
    '{"a":[1,]}',
    // the one-pass EventList path (decodeList): what it must refuse or hand over while reading
    `{"kind":"EventList","items":[${EV},]}`,
    `{"kind":"EventList","items":[${EV}${EV}]}`,
    `{"items":[${EV}],"kind":"EventList"}`,
    `{"kind":"EventList","items":[${EV}],"kind":"Event"}`,
    `{"kind":"EventList","items":[${EV.replace('"get"', 'tru')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"p"', '"p\\q"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"stage" 1,"x"')}]}`,
    `{"kind":"EventList","metadata":{"a":[1,]},"items":[${EV}]}`,
    `{"kind":"EventList","items":[${EV}] , "apiVersion" : "audit.k8s.io/v1" }`,
    // the member index (byte-index.ts): a member met again at any depth drops what its first
    // occurrence indexed below it; names keyed alike (length, first and last byte) but not equal
    `{"kind":"EventList","items":[${EV.replace('"objectRef"', '"objectRef":{"resource":"secrets","name":"s","namespace":"n"},"objectRef"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"requestObject":{"roleRef":{"name":"r"},"spec":{"hostPID":true},"roleRef":{"kind":"k"},"spec":{"type":"NodePort"}},"stage"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"responseObject":{"metadata":{"name":"a"},"metadata":5},"responseStatus":{"code":200},"responseStatus":"x","stage"')}]}`,
    // list fields read only the members of requestObject.spec they need, or nothing when those are missing
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"requestObject":{"spec":{"template":{"spec":{"containers":[{"image":"i"}]}},"securityContext":{"runAsUser":7}}},"stage"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"requestObject":{"spec":{"containers":[{"image":"a:1","securityContext":{"privileged":true}}],"containers":{"0":{"image":"b"}},"volumes":"v","ports":[80,{"port":1}]}},"stage"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"requestObject":{"spec":[{"containers":[]}],"rules":[{"verbs":["get"]}]},"stage"')},${EV.replace('"stage"', '"requestObject":{"spec":null},"stage"')},${EV.replace('"stage"', '"requestObject":[],"stage"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"stage"', '"vexb":"x","usxr":{"username":"z"},"objectRxf":{"name":"q"},"":1,"v":2,"requestObject":{"spxc":{"hostPID":true},"":{},"s":[]},"stage"')}]}`,
    // copyText from the index (byte-index.ts's plain-string bits, byte-event.ts): a string
    // met again with or without escapes, at the top and below; integers copied as their text
    // only when that is asText's (String(Number(text)))
    `{"kind":"EventList","items":[${EV.replace('"verb":"get"', '"verb":"get","verb":"g\\u0065t"')},${EV.replace('"verb":"get"', '"verb":"g\\u0065t","verb":"get"')},${EV.replace('"verb":"get"', '"verb":"get","verb":5')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"objectRef"', '"objectRef":{"namespace":"n","resource":"pods"},"objectRef"').replace('"name":"p"', '"name":"p","namespace":"n\\/s","name":"q\\"r"')}]}`,
    `{"kind":"EventList","items":[${EV.replace('"2026-', '"\\u0032026-')},${EV.replace('"stageTimestamp"', '"stageTimestamp":"2027-01-02T03:04:05Z","stageTimestamp"')},${EV.replace('"stageTimestamp":"2026-01-02T03:04:05.123456789Z"', '"stageTimestamp":"2026-01-02T03:04:05.123456789Z","stageTimestamp":"2025-01-02T03:04:0\\u0035Z"')}]}`,
    `{"kind":"EventList","items":[${['200', '-5', '0', '-0', '0.0', '123456789012345', '-123456789012345', '1234567890123456', '5e0', '5E1', '2.50', '1E-2'].map((n) => EV.replace('"stage"', `"responseStatus":{"code":${n}},"stage"`).replace('"get"', n)).join(',')}]}`,
  ];
  for (const [i, text] of bodies.entries()) same(Buffer.from(text), `body ${i}: ${text.slice(0, 60)}`);
  same(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 'not UTF-8');
});

/** An event whose requestObject is `obj` (JSON text), and one whose user is `user`. */
const withObject = (obj: string) => EV.replace('"stage"', `"requestObject":${obj},"stage"`);

/** Odd values for any member a list field reads: missing, null, empty, scalars, the wrong container. */
const ODD = ['null', '[]', '{}', '"s"', '7', 'true', '[null,1,"s",[],{}]'];

const VOLUMES =
  '[{"name":"a","hostPath":{"path":"/etc"}},{"hostPath":{"path":null}},{"hostPath":"x"},{"flexVolume":{"driver":"d"}},{"name":"v","emptyDir":{}},{"hostPath":{"path":"/var/run/docker.sock","type":""},"hostPath":{"path":"/var/run/x"}},null,7,{"hostP\\u0061th":{"path":"/e"}}]';
const RULES_LIST =
  '[{"verbs":["get","list"],"resources":["pods"],"apiGroups":[""]},{"verbs":"*"},{"verbs":null,"nonResourceURLs":["/healthz","/x\\/y"]},null,5,{"verbs":["a"],"verbs":["b"]},{"ve\\u0072bs":["c"]},{ "verbs" : [ "d" ] , "resources":[{"a":1}] },{"resourceNames":["n"],"apiGroups":["apps",7]}]';
const SUBJECTS_LIST =
  '[{"kind":"User","name":"u"},{"kind":"ServiceAccount","name":"sa","namespace":"ns"},{"kind":"ServiceAccount","name":"sa2"},{"kind":"ServiceAccount","name":{"a":1},"namespace":null},{"kind":"Group","name":null},{"kind":"User"},{"kind":"Us\\u0065r","name":"e"},1,{"kind":["User"],"name":"x"},{"kind":"Group","name":"g","kind":"User"}]';

test('decoders: list fields read from the bytes give the values of the object path (shapes, duplicates, escapes, odd members)', () => {
  const container = [
    '{"name":"c","image":"reg:5000/app:1.0@sha256:ab","securityContext":{"privileged":true,"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":"yes","runAsUser":0,"runAsGroup":null,"procMount":"Unmasked","capabilities":{"add":["SYS_ADMIN",1,null,{"x":[]}]}},"command":["sh","-c"],"args":"x","ports":[{"hostPort":null,"containerPort":80},{"hostPort":null},{"containerPort":null},{"hostPort":8080,"containerPort":80},5,{}]}',
    '{"image":"a","image":"b","im\\u0061ge":"e","securityContext":{"privileged":"true"},"securityContext":{"privileged":false,"runAsUser":7},"command":[],"args":["a","\\u00e9\\n"],"ports":"x"}',
    '{"name":"n","securityContext":[{"privileged":true}],"capabilities":{"add":["X"]},"ports":[{"hostPort":1}],"ports":null}',
    '{"name":"\\"q\\"","image":{"a":1},"securityContext":null,"command":"c"}',
    '{"name":null,"image":1.50,"securityContext":{"priv\\u0069leged":true,"runAsUser":-0,"capabilities":{"add":"X"}}}',
  ];
  const spec = (list: string) =>
    `{"securityContext":{"runAsUser":5,"runAsGroup":{"g":1},"supplementalGroups":[1,"2",null]},"containers":${list},"initContainers":${list},"ephemeralContainers":${list},"volumes":${VOLUMES},"ports":[{"port":80,"protocol":"TCP"},{"port":1.5},"p",null]}`;
  const lists = [`[${container.join(',')}]`, `[${container[0]}]`, `[${container[1]},${container[4]}]`, `[${container[3]}]`, ...ODD];
  const events = [
    ...lists.map((l) => withObject(`{"spec":${spec(l)}}`)),
    ...ODD.map((v) => withObject(`{"spec":{"containers":${v},"volumes":${v},"ports":${v},"securityContext":${v}}}`)),
    ...ODD.map((v) => withObject(`{"spec":${v}}`)),
    withObject(`{"spec":{"containers":[${container[2]}]},"spec":{"initContainers":[${container[0]}]}}`),
    withObject(`{"spec":{"containers":[${container[0]}],"containers":[${container[3]}],"securityContext":{"runAsUser":1},"securityContext":{}}}`),
    withObject(`{"spec":{"cont\\u0061iners":[${container[0]}]}}`),
    withObject(`{"spec":{"containers":[{"securityContext":{"runAsGroup":3}}]}}`),
    withObject(`{"spec":{"containers":[{"securityContext":{"runAsGroup":3}}],"securityContext":{"runAsGroup":null}}}`),
    withObject(`{"spec":{"volumes":[{"hostPath":{"path":"/var/run/docker.sock"}},{"hostPath":{"path":"/etc/x","path":"/etc"}}]}}`),
    withObject(`{"rules":${RULES_LIST},"subjects":${SUBJECTS_LIST}}`),
    ...ODD.map((v) => withObject(`{"rules":${v},"subjects":${v}}`)),
    withObject(`{"rules":[{"verbs":["a"]}],"rules":[{"verbs":["b"],"resources":["r"]}],"subjects":[{"kind":"User","name":"x"}],"subj\\u0065cts":[]}`),
    ...ODD.map((v) => EV.replace('"username":"u"', `"username":"u","groups":${v}`).replace('"stage"', `"sourceIPs":${v},"stage"`)),
    EV.replace('"username":"u"', '"username":"u","groups":["a",1,null,{"x":1},"a"],"groups":["b"]').replace('"stage"', '"sourceIPs":["1.2.3.4","::1"],"stage"'),
  ];
  same(Buffer.from(`{"kind":"EventList","items":[${events.join(',')}]}`), 'list fields');
  for (const [i, ev] of events.entries()) same(Buffer.from(ev), `list event ${i}: ${ev.slice(180, 260)}`);
});

test('decoders: an object or array given as text (configmap data, rules, ports) is its bytes when JSON.stringify writes it so, else decoded', () => {
  const data = [
    '{"a":"b\\nc\\t\\"q\\" \\\\ \\b\\f\\r","b":"\u00e9\u65e5","c":"","d":null,"e":true,"f":false,"g":[1,-2,0,{"h":[]}],"i":{}}',
    '{"a":"\\/"}',
    '{"a":"\\u0041"}',
    '{"a":"\\u001f","b":"\\u001F"}',
    '{"a":"\\ud800"}',
    '{"a":1.0}',
    '{"a":1e2}',
    '{"a":-0}',
    '{"a":0,"b":-0.5}',
    '{"a":1234567890123456}',
    '{"a":123456789012345}',
    '{"a":1,"a":2}',
    '{"a":1,"b":{"a":2,"c":3},"c":4}',
    '{"a":{"x":1,"x":2}}',
    '{"b":1,"2":"x","1":"y"}',
    '{"01":1,"-1":2,"1.5":3}',
    '{"\\"":1,"\\"":2}',
    '{"\\u0061":1,"a":2}',
    '{ "a" : 1 }',
    '[ ]',
    '{"a":[1 ,2]}',
    '{"__proto__":{"x":1},"constructor":2}',
    `{"deep":${'['.repeat(70)}1${']'.repeat(70)}}`,
    `{"deep":${'['.repeat(60)}1${']'.repeat(60)}}`,
    `{${Array.from({ length: 300 }, (_, k) => `"k${k}":${k}`).join(',')}}`,
    `{${Array.from({ length: 300 }, (_, k) => `"k${k % 290}":${k}`).join(',')}}`,
    ...ODD,
  ];
  const events = data.map((d) => withObject(`{"data":${d},"rules":[${d},${d}],"spec":{"ports":[${d}]}}`));
  same(Buffer.from(`{"kind":"EventList","items":[${events.join(',')}]}`), 'values as text');
  for (const [i, ev] of events.entries()) same(Buffer.from(ev), `value as text ${i}: ${data[i]!.slice(0, 60)}`);
});

test('decoders: copyText copies an indexed string or integer as its bytes, and leaves escapes and other numbers to field()', () => {
  const body = `{"kind":"EventList","items":[${EV.replace('"stage"', '"responseStatus":{"code":404},"stage"')},${EV.replace('"stage"', '"responseStatus":{"code":4e2},"stage"').replace('"get"', '"g\\u0065t"')}]}`;
  const decoded = decode(Buffer.from(body), 'bytes');
  assert.ok(decoded.ok);
  if (!decoded.ok) return;
  const ref = (name: string) => REFS.find((r) => r.canonical === name)!;
  const copy = (ev: SourceEvent, name: string) => {
    const n = ev.fields.copyText!(ref(name), scratch, 0, scratch.length);
    return n < 0 ? n : Buffer.from(scratch.subarray(0, n)).toString();
  };
  const [plain, other] = decoded.events as [SourceEvent, SourceEvent];
  assert.is(copy(plain, 'ka.response.code'), '404');
  assert.is(copy(plain, 'ka.verb'), 'get');
  assert.is(copy(other, 'ka.response.code'), TEXT_COPY.other);
  assert.is(copy(other, 'ka.verb'), TEXT_COPY.other);
  assert.is(other.fields.field(ref('ka.verb')), 'get');
});

test('decoders: short values read as the text of their own bytes, with many of one length met in turn (bodyText keeps texts by a hash)', () => {
  // 4,000 user names of 8 ASCII characters, 13 of 9 and one of 8 bytes with a non-ASCII letter, twice in a shuffled order: far more
  // than bodyText's slots, so texts of the same length share slots, and each value must still read as its own.
  const names = [...Array.from({ length: 4000 }, (_, i) => `u${String(i).padStart(7, '0')}`), ...Array.from({ length: 13 }, (_, i) => `user-${1000 + i}`), 'us\u00e9r-00'];
  const pick = random(11);
  const order = [...names, ...names]
    .map((n) => ({ n, k: pick() }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.n);
  const user = REFS.find((r) => r.canonical === 'ka.user.name')!;
  const decoded = decode(list(order.map((n, i) => ({ ...JSON.parse(EV), auditID: `t${i}`, user: { username: n } }))), 'bytes');
  assert.ok(decoded.ok);
  if (!decoded.ok) return;
  assert.equal(
    decoded.events.map((e) => e.fields.field(user)),
    order,
  );
});

test('decoders: values alike at both ends read as their own (bodyText hashes the bytes at each end only)', () => {
  // Names of one length whose first and last 8 bytes are the same share a slot: each must read as
  // itself, and so must one with a non-ASCII letter or an escape between the same ends, values
  // of 1 to 17 bytes (the ends overlapping), and ones at and past the longest kept (48 bytes).
  const middle = (i: number, n: number) => String(i).padStart(n, '0');
  const names = [
    ...Array.from({ length: 300 }, (_, i) => `system:s${middle(i, 6)}:default`),
    'system:s\u00e90000:default',
    'system:s\u00e9\u00e900:default',
    ...Array.from({ length: 18 }, (_, n) => 'abcdefghijklmnopq'.slice(0, n)),
    ...Array.from({ length: 20 }, (_, i) => `${'p'.repeat(8)}${middle(i, 32)}${'s'.repeat(8)}`),
    ...Array.from({ length: 20 }, (_, i) => `${'p'.repeat(8)}${middle(i, 33)}${'s'.repeat(8)}`),
  ];
  const pick = random(5);
  const order = [...names, ...names, ...names]
    .map((n) => ({ n, k: pick() }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.n);
  const user = REFS.find((r) => r.canonical === 'ka.user.name')!;
  const events = order.map((n, i) => ({ ...JSON.parse(EV), auditID: `t${i}`, user: { username: n } }));
  const body = Buffer.from(list(events).toString('utf8').replace('system:s000007:default', 'system:s0000\\u00307:default'));
  const decoded = decode(body, 'bytes');
  assert.ok(decoded.ok);
  if (!decoded.ok) return;
  assert.equal(
    decoded.events.map((e) => e.fields.field(user)),
    order,
  );
});

test('decoders: limits (too large, too deep) give the same skipped and truncated items', () => {
  const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
  const tight = { maxEventBytes: 600, maxEventDepth: 4 };
  const body = `{"kind":"EventList","items":[${EV},${EV.replace('"get"', deep(3))},${EV.replace('"get"', deep(5))},${EV.replace('"u"', `"${'y'.repeat(700)}"`)},${EV.replace('"get"', `{"a":${deep(9)}}`)}]}`;
  const { bytes } = same(Buffer.from(body), 'limits', tight);
  assert.ok(bytes.ok && bytes.skipped.length === 1 && bytes.truncated.length === 2, JSON.stringify(bytes.ok && [bytes.skipped, bytes.truncated]));
  same(Buffer.from(EV.replace('"get"', deep(5))), 'one deep event', tight);
  same(Buffer.from(EV.replace('"u"', `"${'y'.repeat(700)}"`)), 'one large event', tight);
  same(Buffer.from(`{"kind":"EventList","items":[${EV.replace('"get"', deep(50_000))}]}`), 'very deep');
});

test('decoders: the webhook with decoder bytes answers and alerts as with objects (corpus over TLS)', async () => {
  const items = corpusItems();
  const seen: Record<AuditDecoder, { answer: string; alerts: string[] }> = { bytes: { answer: '', alerts: [] }, objects: { answer: '', alerts: [] } };
  for (const decoder of ['objects', 'bytes'] as const) {
    const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'test-node', onAlert: (a) => seen[decoder].alerts.push(alertJson(a)) });
    assert.ok((await engine.load([{ name: 'k8s_audit_rules.yaml', text: readFileSync(corpusPath('k8s_audit_rules.yaml'), 'utf8') }])).swapped);
    const wh = await startTestWebhook((events) => engine.evaluate(events), { decoder });
    try {
      const answer = await wh.post({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', items: [...items, 7, { auditID: 1 }] });
      assert.is(answer.status, 200, answer.text);
      seen[decoder].answer = answer.text;
      await wh.webhook.idle();
    } finally {
      await wh.close();
      await engine.close();
    }
  }
  assert.ok(seen.objects.alerts.length > 30, `${seen.objects.alerts.length} alerts`);
  assert.is(seen.bytes.answer, seen.objects.answer);
  assert.equal(seen.bytes.alerts, seen.objects.alerts);
});

test.run();
