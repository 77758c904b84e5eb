// The EventList walk in WebAssembly (assembly/webhook/json-index.ts) against the JavaScript walk
// it replaces (host/sources/audit/list-walk.ts), output for output (test/helpers/list-walks.ts):
// whether the body is refused, every item's start, end and depth, every index entry. Bodies: the
// corpus (compact, indented, in steps), generated EventLists (indexed member names at every
// depth, duplicates, escapes, numbers, literals, blanks, strings of every length up to a long
// one), the same with bytes changed, deep nesting, and strings broken at every position. The
// decoder differential tests compare the two walks on each of their bodies as well.
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { listWalk } from '../../../host/sources/audit/batch-bytes.js';
import { NOT_A_LIST, wasmListWalk } from '../../../host/sources/audit/list-walk.js';
import { K8SAUDIT_SAMPLES } from '../../../support/corpus.js';
import { walksSame } from '../../helpers/list-walks.js';

test('list walk: the test build decodes EventLists with the WebAssembly walk', () => {
  assert.ok(wasmListWalk, 'build/json-index.wasm is missing (scripts/setup.sh builds it): the webhook would walk in JavaScript');
  assert.is(listWalk, wasmListWalk);
});

/** Corpus items, one per line or document. */
function corpusItems(): unknown[] {
  const files = readdirSync(K8SAUDIT_SAMPLES).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 40, `the k8s audit samples are missing from ${K8SAUDIT_SAMPLES}`);
  return files.sort().flatMap((f) =>
    readFileSync(`${K8SAUDIT_SAMPLES}/${f}`, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((l) => {
        const d = JSON.parse(l) as { kind?: string; items?: unknown[] };
        return d.kind === 'EventList' ? d.items! : [d];
      }),
  );
}

const list = (items: unknown[], space?: number) => Buffer.from(JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items }, null, space));
const isList = (answer: number) => answer !== NOT_A_LIST;

test('list walk: the corpus, compact and indented, in one step and in several', () => {
  const items = corpusItems();
  assert.ok(isList(walksSame(list(items), 'corpus')));
  assert.ok(isList(walksSame(list(items, 2), 'corpus indented')));
  // Past a step's 256 events, and past its 256 items with items that are not objects.
  const many = Array.from({ length: 700 }, (_, i) => (i % 3 === 2 ? i : items[i % items.length]));
  assert.ok(isList(walksSame(list(many), 'corpus x700')));
  assert.ok(isList(walksSame(list(Array.from({ length: 600 }, (_, i) => [i, 'x', null])), 'no objects')));
  for (const [i, item] of items.entries()) walksSame(Buffer.from(JSON.stringify(item)), `corpus item ${i} alone`);
});

/** A deterministic generator (Numerical Recipes' linear congruential one). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 4294967296;
  };
}

/** Names on indexed paths (byte-index.ts) and others, some written with escapes or unicode. */
const NAMES = [
  'auditID',
  'stage',
  'verb',
  'user',
  'username',
  'groups',
  'uid',
  'impersonatedUser',
  'objectRef',
  'resource',
  'namespace',
  'name',
  'subresource',
  'requestObject',
  'spec',
  'containers',
  'securityContext',
  'privileged',
  'responseObject',
  'responseStatus',
  'code',
  'annotations',
  'sourceIPs',
  'userAgent',
  'requestURI',
  'stageTimestamp',
  'rules',
  'subjects',
  'ephemeralContainers',
  'volumes',
  'hostPath',
  'ports',
  'tls',
  'metadata',
  'kind',
  'items',
  'a',
  '',
  'ver\\u0062',
  '\\u0061uditID',
  'caf\u00e9',
  'verbs',
  'usernam',
];
const STRINGS = [
  '',
  'get',
  'pods',
  'system:anonymous',
  'x'.repeat(15),
  'y'.repeat(16),
  'z'.repeat(17),
  'w'.repeat(33),
  'v'.repeat(5000),
  'tab\\there',
  '\\"q\\"',
  'back\\\\',
  '\\u00e9\\ud83d\\ude00',
  '\\/',
  'caf\u00e9 \u65e5\u672c \ud83d\ude00',
  'a b!c#',
];
const NUMBERS = ['0', '-0', '1', '-12', '1.5', '1e21', '1E+2', '2.5e-3', '123456789012345678901234567890'];
const BLANKS = ['', '', '', ' ', '\n', '\t', ' \r\n '];

/** JSON text of a value of at most `depth` more levels, often an object of indexed names (repeated at times). */
function value(rnd: () => number, depth: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const blank = () => pick(BLANKS);
  const r = rnd();
  if (depth <= 0 || r < 0.45) {
    if (r < 0.3) return `"${pick(STRINGS)}"`;
    if (r < 0.38) return pick(NUMBERS);
    return pick(['true', 'false', 'null']);
  }
  if (r < 0.6) {
    const n = Math.floor(rnd() * 4);
    return `[${blank()}${Array.from({ length: n }, () => value(rnd, depth - 1)).join(`${blank()},${blank()}`)}${blank()}]`;
  }
  const n = Math.floor(rnd() * 6);
  const members = Array.from({ length: n }, () => `"${pick(NAMES)}"${blank()}:${blank()}${value(rnd, depth - 1)}`);
  return `{${blank()}${members.join(`${blank()},${blank()}`)}${blank()}}`;
}

/** An EventList body of generated events (and a few other items). */
function generatedList(rnd: () => number): string {
  const items = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, i) => {
    if (rnd() < 0.1) return value(rnd, 2);
    const members = [`"auditID":"g${i}"`];
    for (let k = Math.floor(rnd() * 10); k > 0; k--) members.push(`"${NAMES[Math.floor(rnd() * NAMES.length)]}":${value(rnd, 4)}`);
    return `{${members.sort(() => rnd() - 0.5).join(',')}}`;
  });
  return `{"kind":"EventList",${rnd() < 0.2 ? '"metadata":{"a":[1,{}]},' : ''}"items":[${items.join(',')}]}`;
}

test('list walk: generated EventLists (indexed names at every depth, duplicates, escapes, blanks)', () => {
  const rnd = random(33);
  let lists = 0;
  for (let k = 0; k < 1500; k++) if (isList(walksSame(Buffer.from(generatedList(rnd)), `generated ${k}`))) lists++;
  assert.ok(lists > 1400, `${lists} of 1500 generated bodies walked as EventLists`);
});

/** Bytes a mutation writes: structure, escapes, blanks, control bytes, digits, UTF-8. */
const MUTANTS = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x00, 0x1f, 0x75, 0x30, 0x2d, 0x2e, 0x65, 0x74, 0x6e, 0xc3, 0xff, 0x41];

test('list walk: generated EventLists with bytes changed, inserted or deleted', () => {
  const rnd = random(34);
  let refused = 0;
  for (let k = 0; k < 3000; k++) {
    const body = Buffer.from(generatedList(rnd));
    const bytes = [...body];
    for (let m = 1 + Math.floor(rnd() * 3); m > 0; m--) {
      const at = Math.floor(rnd() * bytes.length);
      const b = MUTANTS[Math.floor(rnd() * MUTANTS.length)]!;
      const r = rnd();
      if (r < 0.5) bytes[at] = b;
      else if (r < 0.75) bytes.splice(at, 0, b);
      else bytes.splice(at, 1);
    }
    if (!isList(walksSame(Uint8Array.from(bytes), `mutated ${k}: ${Buffer.from(bytes).toString('latin1').slice(0, 200)}`))) refused++;
  }
  assert.ok(refused > 1000 && refused < 3000, `${refused} of 3000 mutated bodies refused`);
});

test('list walk: one byte changed, inserted or deleted at every position of a small EventList', () => {
  const event =
    '{"auditID":"a","verb":"get","user":{"username":"u","groups":["g",{"x":[1,{}]}]},"objectRef":{"resource":"pods"},"requestObject":{"spec":{"containers":[{"image":"i"}],"hostNetwork":true},"z":null},"other":{"k":[-1.5e3,false]}}';
  const body = Buffer.from(`{"kind":"EventList","items":[${event},7]}`);
  let refused = 0;
  for (let at = 0; at <= body.length; at++) {
    const [before, after] = [body.subarray(0, at), body.subarray(at)];
    const bodies = MUTANTS.flatMap((b) => [Buffer.concat([before, Buffer.from([b]), after]), Buffer.concat([before, Buffer.from([b]), after.subarray(1)])]);
    bodies.push(Buffer.concat([before, after.subarray(1)]));
    for (const mutated of bodies) if (!isList(walksSame(mutated, `mutated at ${at}: ${mutated.toString('latin1')}`))) refused++;
  }
  assert.ok(refused > 5000, `${refused} refused`);
});

test('list walk: deep nesting in indexed and other members, balanced or not', () => {
  for (const depth of [1, 2, 15, 16, 17, 299, 300, 301, 5000, 100_000]) {
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
      ['{"requestObject":', '}'],
    ] as const) {
      const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
      for (const member of ['verb', 'requestObject', 'other']) {
        const body = `{"kind":"EventList","items":[{"auditID":"d","${member}":${nested}},{"auditID":"e"}]}`;
        assert.ok(isList(walksSame(Buffer.from(body), `${member} nested ${depth}`)));
        walksSame(Buffer.from(body.replace(`1${close}`, `1${close}${close}`)), `${member} nested ${depth}, one close too many`);
        walksSame(Buffer.from(body.replace(`1${close}`, '1')), `${member} nested ${depth}, one close missing`);
      }
      walksSame(Buffer.from(`{"kind":"EventList","items":[${nested}]}`), `an item nested ${depth}`);
    }
  }
});

test('list walk: strings of every length with a quote, an escape or a control byte at every position', () => {
  for (let length = 0; length <= 40; length++) {
    for (let at = 0; at <= length; at++) {
      for (const stop of ['\\"', '\\\\', '\\u00e9', '\\x', '\\u12', '\u0001', '\t', '\u00e9', ' ', '!']) {
        const s = `${'s'.repeat(at)}${stop}${'s'.repeat(length - at)}`;
        walksSame(Buffer.from(`{"kind":"EventList","items":[{"auditID":"${s}","verb":"${s}","user":{"${s}":"${s}"},"other":["${s}"]}]}`), `string ${JSON.stringify(s)}`);
      }
    }
    // The body ending inside a string, its last byte at every alignment.
    walksSame(Buffer.from(`{"kind":"EventList","items":[{"auditID":"${'s'.repeat(length)}`), `unterminated ${length}`);
    walksSame(Buffer.from(`{"kind":"EventList","items":[{"auditID":"${'s'.repeat(length)}\\`), `unterminated escape ${length}`);
  }
});

test.run();
