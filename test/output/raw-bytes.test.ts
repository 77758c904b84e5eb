// Falco 0.45's output of raw field bytes (falco#3942; falcosecurity/testing tests/falco
// TestFalco_Output_*UTF8*, *ControlChar*): a value matched on its raw bytes leaves as text with
// each invalid UTF-8 sequence as U+FFFD, in output_fields and in the text; a control character
// stays in the value and is escaped only where the alert is encoded (`\n` in the text line, the
// JSON string escape in the JSON line, which gives the newline back when parsed); valid UTF-8
// passes unescaped. The alert is made as the engine makes it (alertFor) from field values as the
// kernel path decodes them (decodeRaw).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeRaw, loadRules, FieldEvent } from '../../host/engine/index.js';
import { alertJson, alertText } from '../../host/output/alert.js';
import { alertFor } from '../../host/output/from-match.js';

const RULE = '- rule: r\n  desc: d\n  condition: evt.type = openat and fd.name startswith "/tmp/"\n  output: "café file=%fd.name cmd=%proc.cmdline"\n  priority: INFO\n';

function alertOf(fields: Record<string, unknown>) {
  const loaded = loadRules([{ name: 'r.yaml', text: RULE }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const timeNs = 1_700_000_000_000_000_000n;
  return alertFor(loaded.ruleset.rules[0]!, { source: 'syscall', timeNs, evtType: 'openat', fields: new FieldEvent({ 'evt.type': 'openat', ...fields }, { source: 'syscall', timeNs, num: 1n }) }, 'h');
}

test('output: invalid UTF-8 leaves as U+FFFD (one per maximal subpart), never as a raw byte or a lone surrogate', () => {
  const a = alertOf({ 'fd.name': decodeRaw(Buffer.from([0x2f, 0x74, 0x6d, 0x70, 0x2f, 0x78, 0xff, 0xfe])), 'proc.cmdline': decodeRaw(Buffer.from('sh a\xe2\x82z', 'latin1')) });
  assert.is(a.outputFields['fd.name'], '/tmp/x\ufffd\ufffd');
  assert.is(a.outputFields['proc.cmdline'], 'sh a\ufffdz'); // E2 82: one U+FFFD, z kept (libs#3108)
  assert.ok(a.message.startsWith('café file=/tmp/x\ufffd\ufffd cmd=sh a\ufffdz '), a.message); // then Falco's suggested fields
  const json = alertJson(a);
  assert.ok(Buffer.from(json).equals(Buffer.from(json, 'utf8')) && !/[\uD800-\uDFFF]/.test(json), json);
  assert.is(JSON.parse(json).output_fields['fd.name'], '/tmp/x\ufffd\ufffd');
  assert.ok(alertText(a).includes(': Informational café file=/tmp/x\ufffd\ufffd cmd=sh a\ufffdz '), alertText(a));
});

test('output: a control character is kept in the value and escaped only by the encoders; valid UTF-8 is not escaped', () => {
  const a = alertOf({ 'fd.name': '/tmp/locale-\nrchive', 'proc.cmdline': 'x\ty' });
  assert.is(a.outputFields['fd.name'], '/tmp/locale-\nrchive');
  assert.ok(a.message.startsWith('café file=/tmp/locale-\nrchive cmd=x\ty '), a.message);
  const text = alertText(a);
  assert.ok(text.includes('file=/tmp/locale-\\nrchive cmd=x\\ty') && !text.includes('\n'), text);
  const json = alertJson(a);
  assert.ok(!json.includes('\n') && json.includes('"fd.name":"/tmp/locale-\\nrchive"'), json);
  assert.is(JSON.parse(json).output_fields['fd.name'], '/tmp/locale-\nrchive');
  assert.ok(json.includes('café') && !json.includes('\\u00e9'), json);
});

test.run();
