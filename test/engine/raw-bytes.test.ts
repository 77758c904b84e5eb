// Falco 0.45's language on raw bytes (falco#3942, libs#3051), on both engines: conditions compare
// a field's raw bytes with `\xHH` escapes byte for byte, `regex` sees each invalid UTF-8 sequence
// as one U+FFFD, `glob`'s `?` is one byte, and a regex pattern holding a raw byte is refused.
// Values carry their bytes as host/engine/raw-text.ts strings (as the kernel path decodes them);
// every rule is judged by the compiled module and by the reference interpreter, which must both
// give the expected matches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeRaw, encodeRaw, loadRules, utf8Sanitized } from '../../host/engine/index.js';
import { compileAll, compiledMatches, oracle, toEvents } from '../../support/differential.js';

const bytes = (...parts: Array<string | number[]>) => decodeRaw(Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))));

/** The events: a path with 0xFF 0xFE, the same path in UTF-8 text (ÿþ), a truncated sequence, é, a command line with 0xFF. */
const EVENTS: Array<Record<string, unknown>> = [
  { 'evt.type': 'openat', 'fd.name': bytes('/tmp/x', [0xff, 0xfe]) },
  { 'evt.type': 'openat', 'fd.name': '/tmp/xÿþ' },
  { 'evt.type': 'openat', 'fd.name': bytes('a', [0xe2, 0x82], 'b') },
  { 'evt.type': 'openat', 'fd.name': 'é' },
  { 'evt.type': 'execve', 'proc.cmdline': bytes('sh -c echo ', [0xff]), 'evt.buffer': bytes([0x90], 'abc') },
];

/** Each rule's condition and the events (indexes) it must match on both engines. */
const CASES: Array<[string, number[]]> = [
  ['fd.name = "/tmp/x\\xff\\xfe"', [0]],
  ['fd.name = "/tmp/xÿþ"', [1]], // the characters are other bytes (C3 BF C3 BE)
  ['fd.name = "/tmp/x\\xc3\\xbf\\xc3\\xbe"', [1]], // ... which \xHH can spell
  ['fd.name startswith "/tmp/x\\xff"', [0]],
  ['fd.name endswith "\\xfe"', [0]],
  ['fd.name contains "\\xff"', [0]],
  ['fd.name in ("/tmp/y", "/tmp/x\\xff\\xfe")', [0]],
  ['fd.name pmatch ("/tmp/x\\xff\\xfe")', [0]],
  ['fd.name contains "\\xc3"', [1, 3]], // a lead byte inside a character
  ['fd.name = "\\xc3\\xa9"', [3]],
  ['fd.name glob "/tmp/x??"', [0]], // `?` is one byte
  ['fd.name glob "/tmp/x????"', [1]],
  ['fd.name regex "/tmp/x.."', [0, 1]], // 0xFF and 0xFE: one U+FFFD each
  ['fd.name regex "/tmp/x\uFFFD\uFFFD"', [0]],
  ['fd.name regex "a.b"', [2]], // E2 82 (a truncated sequence) is one U+FFFD
  ['fd.name regex "a..b"', []],
  ['proc.cmdline contains "\\xff"', [4]],
  ['proc.cmdline regex ".*echo \uFFFD"', [4]],
  ['proc.cmdline endswith "ÿ"', []],
  ['evt.buffer contains "\\x90"', [4]],
  ['evt.buffer bstartswith 90', [4]],
  ['len(fd.name) = 8', [0]],
];

test('raw bytes: each condition matches the expected events on the compiled module and the interpreter', async () => {
  // each condition as a YAML double-quoted scalar (JSON's escapes), so `\xff` reaches the rule parser as written
  const yaml = CASES.map(([c], i) => `- rule: r${i}\n  desc: d\n  condition: ${JSON.stringify(`evt.type in (openat, execve) and ${c}`)}\n  output: o\n  priority: NOTICE\n`);
  const loaded = loadRules([{ name: 'raw.yaml', text: yaml.join('') }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const rules = loaded.ruleset.rules;
  const events = toEvents(EVENTS, 'syscall');
  const want = CASES.flatMap(([, evs], id) => evs.map((e) => `${e}:${id}`)).sort();
  const byCase = (ms: string[]) =>
    CASES.map(
      ([c], id) =>
        `${c} -> [${ms
          .filter((m) => m.endsWith(`:${id}`))
          .map((m) => m.split(':')[0])
          .join(',')}]`,
    );
  const interp = oracle(rules, events).sort();
  assert.equal(byCase(interp), byCase(want), 'interpreter');
  const module = await compileAll(rules);
  assert.equal(byCase(compiledMatches(module, events).sort()), byCase(want), 'compiled');
});

test('raw bytes: a regex pattern with a raw byte is refused at load, located', () => {
  const r = loadRules([{ name: 'r.yaml', text: '- rule: r\n  desc: d\n  condition: evt.type = openat and fd.name regex "\\xff"\n  output: o\n  priority: NOTICE\n' }]);
  assert.is(r.ok, false);
  const e = r.diagnostics.find((d) => d.severity === 'error')!;
  assert.match(e.message, 'invalid regex pattern: ');
  assert.match(e.message, ': invalid UTF-8 (a raw byte such as \\xff is matched with =, contains, startswith, endswith or glob)');
});

test('raw bytes: strings keep every byte; utf8Sanitized replaces as TextDecoder does', () => {
  for (const b of [[0xff, 0xfe], [0x61, 0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0xc3, 0xc3, 0xa9], [0xf4, 0x90, 0x80, 0x80], []]) {
    const raw = Buffer.from(b);
    const s = decodeRaw(raw);
    assert.equal([...encodeRaw(s)], b, `round trip ${raw.toString('hex')}`);
    assert.is(utf8Sanitized(s), new TextDecoder().decode(raw), `sanitized ${raw.toString('hex')}`);
  }
  assert.is(decodeRaw(Buffer.from([0x2f, 0xff])), '/\udcff');
  assert.is(utf8Sanitized('a\ud800b'), 'a\ufffdb'); // a lone surrogate that is no raw byte
});

test.run();
