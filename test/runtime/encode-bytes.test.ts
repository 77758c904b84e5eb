// The batch encoder (host/runtime/encode.ts) on the webhook's bytes decoder's events, whose body
// is copied into the heap once for a run of events and whose plain string and integer values
// are references into that copy: every record must read back (recordFields: the bytes at each
// reference) as the record of the same event from the object decoder, whose values are each
// copied on their own. Edge cases: values first and last in an event, escaped and plain strings
// side by side, empty strings, multi-byte UTF-8, strings longer than 64 bytes, values that are
// not strings (true, null, numbers, objects written as JSON.stringify writes them or not), events of several
// bodies in one call, and a batch that fills the heap so that events go to the next call whole.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MEM } from '../../host/abi/module.js';
import { SlotTable } from '../../host/engine/codegen/index.js';
import { fieldTable, type FieldRef, type SourceEvent } from '../../host/engine/index.js';
import { BatchEncoder } from '../../host/runtime/encode.js';
import { type AuditDecoder, decodeAuditEvents } from '../../host/sources/audit/batch-bytes.js';
import { recordFields } from '../../host/sources/syscall/fields.js';

/** Fields of the built-in audit rules and a few more: plain strings, an integer, the event time, lists. */
const FIELDS: Array<[string, string?]> = [
  ['jevt.value', '/stage'],
  ['ka.user.name'],
  ['ka.target.resource'],
  ['ka.target.subresource'],
  ['ka.verb'],
  ['jevt.rawtime'],
  ['ka.req.pod.containers.image'],
  ['ka.req.pod.containers.privileged'],
  ['ka.req.pod.host_network'],
  ['ka.auth.decision'],
  ['ka.uri'],
  ['ka.target.name'],
  ['ka.target.namespace'],
  ['ka.response.code'],
  ['ka.user.groups'],
  ['jevt.value', '/requestObject/spec/tls'],
  ['jevt.value', '/auditID'],
  ['ka.req.configmap.obj'],
  ['jevt.value', '/objectRef'],
];

function layout() {
  const table = new SlotTable('k8s_audit');
  for (const [name, arg] of FIELDS) {
    const def = fieldTable('k8s_audit').find((d) => d.name === name)!;
    const ref: FieldRef = { kind: 'field', def, arg, canonical: arg === undefined ? name : `${name}[${arg}]`, type: def.type, isList: def.isList };
    table.slot(ref, def.isList);
  }
  return table.layout();
}

const LAYOUT = layout();
const LIMITS = { maxEventBytes: 4 * 1024 * 1024, maxEventDepth: 300 };
const memory = new WebAssembly.Memory({ initial: MEM.bytes / 65536 });

const events = (body: Buffer, decoder: AuditDecoder): SourceEvent[] => {
  const d = decodeAuditEvents(body, LIMITS, decoder, 1n);
  if (!d.ok) throw new Error(d.message);
  return d.events;
};
const list = (items: unknown[]) => Buffer.from(JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', items }));

/** Every event encoded as the evaluator encodes them (a call taking what fits, the rest in the next), each record read back; the calls' counts. */
function encodeAll(evs: readonly SourceEvent[]): { records: Array<Record<string, unknown>>; counts: number[] } {
  const enc = new BatchEncoder(LAYOUT, { bases: [], levels: 0, walk: false });
  const records: Array<Record<string, unknown>> = [];
  const counts: number[] = [];
  for (let p = 0; p < evs.length; ) {
    const { count } = enc.encode(memory, evs, p, evs.length - p);
    assert.ok(count > 0, `event ${p} fits a call alone`);
    counts.push(count);
    const u8 = new Uint8Array(memory.buffer);
    for (let i = 0; i < count; i++) records.push(recordFields(u8, MEM.batchBase + i * LAYOUT.stride, LAYOUT));
    p += count;
  }
  return { records, counts };
}

/** The bytes decoder's events encode to the records of the object decoder's; the bytes' calls' counts. */
function sameRecords(body: Buffer, what: string, bytesEvents = events(body, 'bytes'), objectEvents = events(body, 'objects')): number[] {
  assert.ok(
    bytesEvents.every((e) => e.fields.bytes !== undefined),
    `${what}: events with bytes`,
  );
  const bytes = encodeAll(bytesEvents);
  const objects = encodeAll(objectEvents);
  assert.is(bytes.records.length, objects.records.length, `${what}: records`);
  bytes.records.forEach((r, i) => assert.equal(r, objects.records[i], `${what} #${i}`));
  return bytes.counts;
}

const EVENT = {
  auditID: 'a1',
  stage: 'ResponseComplete',
  verb: 'create',
  requestURI: '/api/v1/namespaces/default/pods',
  user: { username: 'alice', groups: ['system:masters', 'dev'] },
  objectRef: { resource: 'pods', namespace: 'default', name: 'p1', subresource: 'exec' },
  responseStatus: { code: 201 },
  requestObject: { spec: { hostNetwork: true, containers: [{ name: 'c', image: 'nginx:1', securityContext: { privileged: true } }], tls: [{ hosts: ['a'] }] } },
  stageTimestamp: '2026-01-02T03:04:05.123456789Z',
  annotations: { 'authorization.k8s.io/decision': 'allow' },
};

test('encode: references into the body copy read back as the object path copies (edges at the start, end and inside events)', () => {
  const long = `/api/v1/${'x'.repeat(200)}`;
  const items = [
    EVENT,
    // A value read first and one read last in the event's bytes (the run's first and last bytes are these values' neighbours).
    { verb: 'get', auditID: 'a2', stage: 'ResponseStarted', requestURI: long, stageTimestamp: '2026-01-02T03:04:05Z', annotations: { 'authorization.k8s.io/decision': 'forbid' }, objectRef: { name: 'last' } },
    // Escaped and plain strings side by side, empty strings, multi-byte UTF-8, a long escaped string.
    { ...EVENT, auditID: 'a3', verb: '', user: { username: 'a"b\\c\u00e9', groups: ['\u00fcber', ''] }, objectRef: { resource: 'p\u00f6ds', namespace: '', name: '\ud83d\ude00x', subresource: 'e\nx' }, requestURI: `${long}\t${long}` },
    // An integer where a string is read, a number read as text, a missing stage.
    { auditID: 'a4', verb: 7, objectRef: { resource: 'secrets', name: 12.5 }, responseStatus: { code: -3 }, stageTimestamp: 'bad' },
    { ...EVENT, auditID: 'a5', objectRef: { resource: 'pods', name: 'x'.repeat(64), namespace: 'y'.repeat(63) } },
  ];
  const counts = sameRecords(list(items), 'edges');
  assert.equal(counts, [items.length], 'one call');
  // The same events one body each: a run per event.
  for (const [i, item] of items.entries()) sameRecords(Buffer.from(JSON.stringify(item)), `item ${i} alone`);
});

test('encode: values that are not strings are references where their text is their bytes, and written otherwise', () => {
  const event = (data: string, hostNetwork: string) =>
    `{"auditID":"c1","verb":"create","objectRef":{"resource":"configmaps","name":"cm"},"requestObject":{"data":${data},"spec":{"hostNetwork":${hostNetwork}}},"stageTimestamp":"2026-01-02T03:04:05Z"}`;
  const items = [
    event('{"a":"1","b":{"c":[1,2,{"d":null}]},"e":"x\\ny"}', 'true'),
    event('{"a" : "1"}', 'false'),
    event('{"a":"1","a":"2"}', 'null'),
    event('{"2":"x","1":"y"}', '1.5'),
    event('["\u0041",-0,1e3]', '12'),
    event('{}', '"s"'),
    event('[]', '[]'),
  ];
  sameRecords(Buffer.from(`{"kind":"EventList","items":[${items.join(',')}]}`), 'not strings');
});

test('encode: events of several bodies in one call each read their own body', () => {
  const a = list([EVENT, { ...EVENT, auditID: 'a2', verb: 'delete' }]);
  const b = list([
    { ...EVENT, auditID: 'b1', verb: 'patch', user: { username: 'bob' } },
    { ...EVENT, auditID: 'b2', verb: 'update' },
  ]);
  const [ba, bb, oa, ob] = [events(a, 'bytes'), events(b, 'bytes'), events(a, 'objects'), events(b, 'objects')];
  // Interleaved: every event starts a run of its own; then in body order.
  sameRecords(a, 'interleaved', [ba[0]!, bb[0]!, ba[1]!, bb[1]!], [oa[0]!, ob[0]!, oa[1]!, ob[1]!]);
  sameRecords(a, 'in turn', [...ba, ...bb], [...oa, ...ob]);
  // Backwards in one body: the run copied for the later event does not hold the earlier one.
  sameRecords(a, 'backwards', [ba[1]!, ba[0]!], [oa[1]!, oa[0]!]);
});

test('encode: a batch that fills the heap moves events to the next call whole, their references right', () => {
  // Some 24 MB of events, more than the batch area holds at once: values long and short, plain and escaped.
  const items = Array.from({ length: 24 }, (_, i) => ({
    ...EVENT,
    auditID: `big-${i}`,
    requestURI: `/${String.fromCharCode(97 + i).repeat(1_000_000)}`,
    user: { username: i % 2 === 0 ? `user-${i}` : `us"er-${i}`, groups: ['g'] },
  }));
  const counts = sameRecords(list(items), 'heap full');
  assert.ok(counts.length > 1, `events moved to a next call (${counts.join(', ')})`);
  assert.is(
    counts.reduce((s, c) => s + c, 0),
    items.length,
  );
});

test.run();
