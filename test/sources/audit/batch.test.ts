// Request body decoding: the byte sizes of EventList items found by scanning the raw body (a
// property test against JSON.stringify over random JSON, with tricky strings and nesting), the
// fallback when the "items" key is spelled with escapes, and the decode verdicts.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeAuditBody, itemObjectSizes } from '../../../host/sources/audit/batch.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

test("batch: item sizes from the raw body equal the items' own JSON byte lengths (property)", () => {
  const tricky = fc.constantFrom('items', '"items"', '\\', '\\"', '{[', ']}', ',', 'é€😀', '\u0000', '');
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), tricky, fc.dictionary(fc.oneof(fc.string(), tricky), fc.jsonValue({ maxDepth: 2 })));
  const item = fc.oneof({ weight: 4, arbitrary: fc.dictionary(fc.oneof(fc.string(), tricky), value) }, { weight: 1, arbitrary: value });
  fc.assert(
    fc.property(fc.array(item, { maxLength: 8 }), fc.dictionary(fc.oneof(fc.string(), tricky), value), (items, extra) => {
      delete (extra as Record<string, unknown>).items;
      const doc = { ...extra, kind: 'EventList', items, tail: { items: [{ a: 1 }] } };
      const objects = items.filter((i) => typeof i === 'object' && i !== null && !Array.isArray(i));
      assert.equal(itemObjectSizes(Buffer.from(JSON.stringify(doc))), objects.map(bytes));
    }),
    { numRuns: 300 },
  );
});

test('batch: sizes are of the text as sent, whitespace inside an item included', () => {
  const text = '{ "kind" : "EventList" ,\n "items" : [ {"a": 1} ,\n  { "b" : "x\\"}" } , 3, [ {"c":1} ] ] , "z": "items" }';
  assert.equal(itemObjectSizes(Buffer.from(text)), [8, 16]);
});

const ev = (id: string, pad = 0) => ({ auditID: id, stageTimestamp: '2024-01-01T00:00:00Z', pad: 'p'.repeat(pad) });

test('batch: items over the limit are skipped with their size, others kept in order', () => {
  const items = [ev('a'), ev('b', 200), ev('c'), 'text', ev('d', 150)];
  const body = Buffer.from(JSON.stringify({ kind: 'EventList', items }));
  const r = decodeAuditBody(body, { maxEventBytes: 150, maxEventDepth: 300 });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(
    r.batch.events.map((e) => e.auditID),
    ['a', 'c'],
  );
  assert.equal(r.batch.skipped, [
    { index: 1, code: 'too_large', reason: `event larger than maxEventSize: size=${bytes(items[1])}` },
    { index: 3, code: 'not_an_event', reason: 'not an audit event (no string auditID)' },
    { index: 4, code: 'too_large', reason: `event larger than maxEventSize: size=${bytes(items[4])}` },
  ]);
});

test('batch: an "items" key written with escapes falls back to re-serialized sizes', () => {
  const items = [ev('a'), ev('b', 200)];
  const body = Buffer.from(`{"kind":"EventList","\\u0069tems":${JSON.stringify(items)}}`);
  assert.equal(itemObjectSizes(body), []);
  const r = decodeAuditBody(body, { maxEventBytes: 150, maxEventDepth: 300 });
  assert.ok(r.ok && r.batch.events.length === 1 && r.batch.skipped[0]?.index === 1);
});

test('batch: verdicts for whole bodies', () => {
  const verdict = (text: string, max = 1000) => {
    const r = decodeAuditBody(Buffer.from(text), { maxEventBytes: max, maxEventDepth: 300 });
    return r.ok ? `ok ${r.batch.events.length}/${r.batch.skipped.length}` : `${r.code}: ${r.message}`;
  };
  assert.is(verdict('{"kind":"EventList","items":[]}'), 'ok 0/0');
  assert.is(verdict(JSON.stringify(ev('a'))), 'ok 1/0');
  assert.is(verdict(JSON.stringify(ev('a', 2000))), 'ok 0/1');
  assert.is(verdict(''), 'invalid_json: invalid JSON: empty body');
  assert.match(verdict('{"a":'), /^invalid_json: invalid JSON: /);
  assert.is(verdict('[]'), 'not_audit_events: data not recognized as a k8s audit event: expected an audit.k8s.io EventList or Event object');
  assert.is(verdict('{"kind":"EventList","items":{}}'), "not_audit_events: EventList has no 'items' array: expected an audit.k8s.io EventList or Event object");
  assert.is(verdict('{"kind":"Event"}'), 'not_audit_events: data not recognized as a k8s audit event: expected an audit.k8s.io EventList or Event object');
});

/** JSON text of `{"a":{"a":...1...}}`, `depth` objects deep (JSON.stringify of it would overflow the stack). */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

test('batch: an event nested past maxEventDepth is kept with the deep values cut (missing), and reported', () => {
  // The event is depth 1, requestObject depth 2: with a bound of 4 the objects at depth 5 and below go.
  const deep = `{"auditID":"deep","verb":"get","requestObject":${nested(5000)},"list":[1,${nested(3)},[${nested(1)}]]}`;
  const body = Buffer.from(`{"kind":"EventList","items":[${deep},${JSON.stringify(ev('good'))}]}`);
  const r = decodeAuditBody(body, { maxEventBytes: 1 << 20, maxEventDepth: 4 });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(
    r.batch.events.map((e) => e.auditID),
    ['deep', 'good'],
  );
  assert.equal(r.batch.skipped, []);
  assert.equal(r.batch.truncated, [{ index: 0, code: 'too_deep', reason: '2 value(s) nested deeper than maxEventDepth=4 cut' }]);
  assert.equal(r.batch.events[0], { auditID: 'deep', verb: 'get', requestObject: { a: { a: {} } }, list: [1, { a: {} }, [{ a: 1 }]] });
  assert.is(JSON.stringify(r.batch.events[0]), '{"auditID":"deep","verb":"get","requestObject":{"a":{"a":{}}},"list":[1,{"a":{}},[{"a":1}]]}');
});

test('batch: a single Event past the bound is cut too; within the bound nothing is reported', () => {
  const deepEvent = (depth: number) => Buffer.from(`{"auditID":"x","requestObject":${nested(depth)}}`);
  const within = decodeAuditBody(deepEvent(299), { maxEventBytes: 1 << 20, maxEventDepth: 300 });
  assert.equal(within.ok && within.batch.truncated, []);
  const past = decodeAuditBody(deepEvent(300), { maxEventBytes: 1 << 20, maxEventDepth: 300 });
  assert.equal(past.ok && past.batch.truncated, [{ index: 0, code: 'too_deep', reason: '1 value(s) nested deeper than maxEventDepth=300 cut' }]);
});

test.run();
