// The text an audit alert carries, rendered from an event's bytes (webhook.decoder: bytes) by a
// rule's AlertPlan: the same message and output_fields as from the object path, and the values
// written out here, for the texts the byte readers handle apart (multi-byte UTF-8, escapes, a
// lone surrogate, integers, lists, missing members, a cap at the byte limit, a field in both the
// message and output_fields, a query parameter).
process.env.TZ = 'UTC';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type LoadedRule, parseOutput } from '../../../host/engine/index.js';
import type { Alert } from '../../../host/output/alert.js';
import { AlertPlan, outputFieldsMaker } from '../../../host/output/from-match.js';
import { decodeAuditEvents } from '../../../host/sources/audit/batch-bytes.js';

const LIMITS = { maxEventBytes: 256 * 1024, maxEventDepth: 300 };

/** A rule of `output` with the fields of `extra` appended (append_output). */
function plan(output: string, extra = ''): AlertPlan {
  const out = parseOutput('k8s_audit', output);
  const more = parseOutput('k8s_audit', extra);
  if (!out.ok || !more.ok) throw new Error('parse');
  const rule = { name: 'r', priority: 'Warning', source: 'k8s_audit', tags: ['k8s'], output: out.tokens } as unknown as LoadedRule;
  return new AlertPlan(
    rule,
    more.tokens.filter((t) => t.kind === 'field'),
  );
}

/** The alert of `p` for the one event of `body`, from each decoder; both must agree. */
function rendered(p: AlertPlan, body: string, maxFieldBytes?: number): Alert {
  const alerts = (['objects', 'bytes'] as const).map((decoder) => {
    const d = decodeAuditEvents(Buffer.from(body), LIMITS, decoder, 1n);
    if (!d.ok || d.events.length !== 1) throw new Error(`${decoder}: not decoded`);
    // Twice: the second read of each short text is taken from the table of texts met before.
    p.alert(d.events[0]!, 'h', maxFieldBytes);
    return p.alert(d.events[0]!, 'h', maxFieldBytes);
  });
  const [objects, bytes] = alerts as [Alert, Alert];
  assert.is(bytes.message, objects.message, 'message: bytes as objects');
  assert.equal(bytes.outputFields, objects.outputFields, 'output_fields: bytes as objects');
  assert.equal(Object.keys(bytes.outputFields), Object.keys(objects.outputFields), 'output_fields key order: bytes as objects');
  return bytes;
}

/** An EventList of one event whose members are written as `members` (JSON text, escapes as given). */
const body = (members: string) => `{"kind":"EventList","items":[{"auditID":"a","stage":"ResponseComplete","stageTimestamp":"2024-01-01T00:00:00Z",${members}}]}`;

test('alert text: multi-byte UTF-8, escapes and a lone surrogate read from the bytes as the objects path reads them', () => {
  const p = plan('user=%ka.user.name verb=%ka.verb ns=%ka.target.namespace name=%ka.target.name');
  const a = rendered(p, body('"user":{"username":"caf\u00e9 \u65e5\u672c \ud83d\ude00"},"verb":"tab\\there \\"q\\" back\\\\slash \\/","objectRef":{"namespace":"\\ud800x","name":"\\u00e9t\\u00e9"}'));
  assert.is(a.message, 'user=caf\u00e9 \u65e5\u672c \ud83d\ude00 verb=tab\there "q" back\\slash / ns=\ufffdx name=\u00e9t\u00e9');
  assert.equal(a.outputFields, { 'ka.user.name': 'caf\u00e9 \u65e5\u672c \ud83d\ude00', 'ka.verb': 'tab\there "q" back\\slash /', 'ka.target.namespace': '\ufffdx', 'ka.target.name': '\u00e9t\u00e9' });
});

test('alert text: missing members as <NA> and null, integers and other numbers as their text', () => {
  const p = plan('code=%ka.response.code v=%jevt.value[/n] big=%jevt.value[/big] z=%jevt.value[/z] f=%jevt.value[/f] user=%ka.user.name cmd=%ka.uri.param[command]');
  const a = rendered(p, body('"responseStatus":{"code":201},"n":-17,"big":12345678901234567,"z":-0,"f":2.50'));
  assert.is(a.message, 'code=201 v=-17 big=12345678901234568 z=0 f=2.5 user=<NA> cmd=<NA>');
  assert.equal(a.outputFields, {
    'ka.response.code': '201',
    'jevt.value[/n]': '-17',
    'jevt.value[/big]': '12345678901234568',
    'jevt.value[/z]': '0',
    'jevt.value[/f]': '2.5',
    'ka.user.name': null,
    'ka.uri.param[command]': null,
  });
});

test('alert text: list fields as (a,b) in the message and arrays in output_fields; an object as its compact JSON', () => {
  const p = plan('images=%ka.req.pod.containers.image vols=%jevt.value[/requestObject/spec/volumes] init=%ka.req.pod.initContainers.image');
  const a = rendered(p, body('"requestObject":{"spec":{"containers":[{"image":"nginx"},{"image":"r\\u00e9dis:7"}],"volumes":[{"name":"v","hostPath":{"path":"/etc"}}]}}'));
  assert.is(a.message, 'images=(nginx,r\u00e9dis:7) vols=[{"name":"v","hostPath":{"path":"/etc"}}] init=<NA>');
  assert.equal(a.outputFields['ka.req.pod.containers.image'], ['nginx', 'r\u00e9dis:7']);
  assert.is(a.outputFields['ka.req.pod.initContainers.image'], null);
});

test('alert text: a value past the byte limit is cut on a character boundary, in the message and output_fields, list elements too', () => {
  const p = plan('user=%ka.user.name images=%ka.req.pod.containers.image verb=%ka.verb');
  const a = rendered(p, body('"user":{"username":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"},"verb":"0123456789","requestObject":{"spec":{"containers":[{"image":"abcdefghijkl"},{"image":"ab"}]}}'), 10);
  // 14 bytes of é cut to 10 (5 letters); "0123456789" is exactly 10 bytes and stays whole; a list's
  // message text "(abcdefghijkl,ab)" is cut as one value.
  assert.is(a.outputFields['ka.user.name'], '\u00e9\u00e9\u00e9\u00e9\u00e9…(truncated 4 bytes)');
  assert.is(a.outputFields['ka.verb'], '0123456789');
  assert.equal(a.outputFields['ka.req.pod.containers.image'], ['abcdefghij…(truncated 2 bytes)', 'ab']);
  assert.is(a.message, 'user=\u00e9\u00e9\u00e9\u00e9\u00e9…(truncated 4 bytes) images=(abcdefghi…(truncated 7 bytes) verb=0123456789');
});

test('alert text: a field in the message and appended once more is one key, in the message order, with one value', () => {
  const p = plan('[%5ka.verb] user=%ka.user.name', '%ka.verb %ka.target.resource %ka.user.name');
  const a = rendered(p, body('"verb":"create","user":{"username":"alice"},"objectRef":{"resource":"pods"}'));
  assert.is(a.message, '[creat] user=alice');
  assert.equal(Object.entries(a.outputFields), [
    ['ka.verb', 'create'],
    ['ka.user.name', 'alice'],
    ['ka.target.resource', 'pods'],
  ]);
});

test('alert text: a query parameter read from the request URI, plain or escaped', () => {
  const p = plan('cmd=%ka.uri.param[command] c=%ka.uri.param[container]');
  assert.is(rendered(p, body('"requestURI":"/api/v1/namespaces/d/pods/p/exec?command=sh&command=-c&container=app&stdin=true"')).message, 'cmd=sh c=app');
  assert.is(rendered(p, body('"requestURI":"/x/exec?command=ls+-la&container=%E6%97%A5"')).message, 'cmd=ls -la c=\u65e5');
  assert.is(rendered(p, body('"requestURI":"/x/exec?command=sh&container=a;b"')).message, 'cmd=sh c=a;b');
  assert.is(rendered(p, body('"requestURI":"/x/exec?command=sh&a;b=1"')).message, 'cmd=<NA> c=<NA>');
  assert.is(rendered(p, body('"requestURI":"/x/exec?command=\\u0073h"')).message, 'cmd=sh c=<NA>');
  assert.is(rendered(p, body('"requestURI":404')).message, 'cmd=<NA> c=<NA>');
});

test('output_fields maker: compiled or stored in turn, the same keys in the same order, each at its first place; any key is only a name', () => {
  const keys = ['ka.verb', 'jevt.value[/a"b]', 'ka.verb', 'jevt.value[/x\\"}; throw 1; ({"]', 'jevt.value[/\u2028\u0000]', '10', 'ka.user.name'];
  const values = ['get', 1, 'again', null, ['a'], true, 'u'];
  const want = Object.fromEntries([
    ['ka.verb', 'get'],
    ['jevt.value[/a"b]', 1],
    ['jevt.value[/x\\"}; throw 1; ({"]', null],
    ['jevt.value[/\u2028\u0000]', ['a']],
    ['10', true],
    ['ka.user.name', 'u'],
  ]);
  for (const compile of [true, false]) {
    const made = outputFieldsMaker(keys, compile)(values);
    assert.equal(made, want, `compile ${compile}`);
    assert.equal(Object.keys(made), Object.keys(want), `compile ${compile}: order`);
    assert.is(Object.getPrototypeOf(made), Object.prototype);
  }
  // A key __proto__ is an own key, never the prototype.
  for (const compile of [true, false]) {
    const proto = outputFieldsMaker(['__proto__', 'a'], compile)([JSON.parse('{"polluted":true}') as null, 1]);
    assert.equal(Object.keys(proto), ['__proto__', 'a'], `compile ${compile}: __proto__ own`);
    assert.is(Object.getPrototypeOf(proto), Object.prototype);
    assert.is((proto as Record<string, unknown>).polluted, undefined);
  }
});

test.run();
