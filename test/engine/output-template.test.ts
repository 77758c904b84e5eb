// Output templates: token splitting (longest field prefix, widths, literal text after fields),
// errors with libsinsp's messages and offsets, and rendering (<NA>, lists, ancestors, widths) by
// the renderer alerts use (host/output/from-match.ts). Corpus rule outputs must all parse.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { SYSCALL_SUGGESTED_OUTPUT, type Source } from '../../host/engine/fields.js';
import type { LoadedRule } from '../../host/engine/index.js';
import type { RawValue } from '../../host/engine/interpreter.js';
import { outputFieldKeys, parseOutput, type OutputToken } from '../../host/engine/output-template.js';
import { alertFor } from '../../host/output/from-match.js';
import { corpusText } from '../../support/corpus.js';

/** Tokens as a compact string: literal text in quotes, fields as {canonical/width}. */
function show(tokens: OutputToken[]): string {
  return tokens.map((t) => (t.kind === 'text' ? JSON.stringify(t.text) : `{${t.canonical}${t.width ? `/${t.width}` : ''}}`)).join(' ');
}

const PARSE: Array<[Source, string, string]> = [
  ['syscall', 'plain text', '"plain text"'],
  ['syscall', '', ''],
  ['syscall', 'file=%fd.name user=%user.name', '"file=" {fd.name} " user=" {user.name}'],
  ['syscall', '(%proc.name)', '"(" {proc.name} ")"'],
  ['syscall', '%fd.name,%proc.pname.', '{fd.name} "," {proc.pname} "."'],
  ['syscall', 'gp=%proc.aname[2] ggp=%proc.aname[3]', '"gp=" {proc.aname[2]} " ggp=" {proc.aname[3]}'],
  ['syscall', 'flags=%evt.arg.flags', '"flags=" {evt.arg.flags}'],
  ['syscall', '%proc.namex', '{proc.name} "x"'],
  ['syscall', '%10proc.name|', '{proc.name/10} "|"'],
  ['syscall', '%0proc.name', '{proc.name}'],
  ['syscall', 'a%proc.name%user.name', '"a" {proc.name} {user.name}'],
  ['k8s_audit', 'vol=%jevt.value[/requestObject/spec/volumes])', '"vol=" {jevt.value[/requestObject/spec/volumes]} ")"'],
  ['k8s_audit', 'cmd=%ka.uri.param[command] x', '"cmd=" {ka.uri.param[command]} " x"'],
  ['k8s_audit', '%ka.uri.param', '{ka.uri} ".param"'],
];

for (const [source, text, want] of PARSE) {
  test(`parse ${JSON.stringify(text)}`, () => {
    const r = parseOutput(source, text);
    assert.ok(r.ok, r.ok ? '' : r.message);
    if (r.ok) assert.is(show(r.tokens), want);
  });
}

const ERRORS: Array<[Source, string, string, number]> = [
  ['syscall', 'oops %', 'invalid formatting syntax: formatting cannot end with a %', 5],
  ['syscall', 'width %12', 'invalid formatting syntax: formatting cannot end with a number', 6],
  ['syscall', 'x=%not_a_real_field y', 'unknown filter: not_a_real_field y', 2],
  ['syscall', '100%% sure', 'unknown filter: % sure', 3],
  ['syscall', 'p=%proc.nobody', 'unknown filter: proc.nobody', 2],
  ['syscall', 'ip=%fd.ip', 'fd.ip is a filter-only field and cannot be used in an output', 3],
  ['syscall', 'n=%tolower(proc.name)', 'field transformers are not supported in outputs: %tolower(...) (use the plain field)', 2],
  ['syscall', '%ka.verb', 'unknown filter: ka.verb', 0],
  ['k8s_audit', '%proc.name', 'unknown filter: proc.name', 0],
];

for (const [source, text, message, offset] of ERRORS) {
  test(`reject ${JSON.stringify(text)}`, () => {
    const r = parseOutput(source, text);
    assert.not.ok(r.ok);
    if (!r.ok) {
      assert.is(r.message, message);
      assert.is(r.offset, offset);
    }
  });
}

test('field tokens carry the resolved definition, argument and offset', () => {
  const r = parseOutput('syscall', 'x %evt.arg.flags %proc.aname[2]');
  assert.ok(r.ok);
  if (!r.ok) return;
  const fields = r.tokens.filter((t) => t.kind === 'field');
  assert.equal(
    fields.map((t) => t.kind === 'field' && [t.name, t.arg, t.def.name, t.offset]),
    [
      ['evt.arg.flags', 'flags', 'evt.arg', 2],
      ['proc.aname', '2', 'proc.aname', 17],
    ],
  );
});

/** The message of an alert whose rule output is `text`, for an event with these field values (by canonical name). */
function render(source: Source, text: string, values: Record<string, RawValue>): string {
  const r = parseOutput(source, text);
  if (!r.ok) throw new Error(r.message);
  const rule = { name: 'r', priority: 'Warning', source, tags: [], output: r.tokens } as unknown as LoadedRule;
  return alertFor(rule, { source, timeNs: 0n, fields: { field: (ref) => values[ref.canonical] } }, 'h').message;
}

test('rendering: values, <NA> for missing, booleans and numbers', () => {
  assert.is(render('syscall', 'p=%proc.name u=%user.uid tty=%proc.tty c=%container.privileged', { 'proc.name': 'cat', 'user.uid': 0, 'container.privileged': false }), 'p=cat u=0 tty=<NA> c=false');
  assert.is(render('syscall', 't=%evt.rawtime', { 'evt.rawtime': 1746622234502309868n }), 't=1746622234502309868');
});

test('rendering: list fields in parentheses, ancestors without index space-separated', () => {
  assert.is(render('k8s_audit', 'img=%ka.req.pod.containers.image', { 'ka.req.pod.containers.image': ['nginx', 'mysql:latest'] }), 'img=(nginx,mysql:latest)');
  assert.is(render('k8s_audit', 'img=%ka.req.pod.containers.image', { 'ka.req.pod.containers.image': [] }), 'img=()');
  assert.is(render('syscall', 'anc=%proc.aname', { 'proc.aname': ['sudo', 'zsh', 'kitty'] }), 'anc=sudo zsh kitty');
});

test('rendering: widths pad with blanks or truncate', () => {
  assert.is(render('syscall', '[%6proc.name][%2user.name][%4fd.name]', { 'proc.name': 'cat', 'user.name': 'root' }), '[cat   ][ro][<NA>]');
});

test('output_fields keys are canonical and distinct', () => {
  const r = parseOutput('syscall', '%proc.name %proc.aname[2] %proc.name %evt.arg.flags');
  assert.ok(r.ok);
  if (r.ok) assert.equal(outputFieldKeys(r.tokens), ['proc.name', 'proc.aname[2]', 'evt.arg.flags']);
});

test('the suggested-output suffix parses for syscall', () => {
  const r = parseOutput('syscall', `x${SYSCALL_SUGGESTED_OUTPUT}`);
  assert.ok(r.ok);
  if (r.ok) assert.equal(outputFieldKeys(r.tokens), ['container.id', 'container.name', 'container.image.repository', 'container.image.tag', 'k8s.pod.name', 'k8s.ns.name']);
});

for (const file of ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml', 'k8s_audit_rules.yaml']) {
  test(`${file}: every rule output parses, with the suggested suffix for syscall rules`, () => {
    const items = parseAllDocuments(corpusText(file)).flatMap((d) => (d.toJS() ?? []) as Array<Record<string, unknown>>);
    let n = 0;
    for (const it of items) {
      if (typeof it.rule !== 'string' || typeof it.output !== 'string') continue;
      const source = (it.source ?? 'syscall') as Source;
      const text = it.output.trim() + (source === 'syscall' ? SYSCALL_SUGGESTED_OUTPUT : '');
      const r = parseOutput(source, text);
      assert.ok(r.ok, `${it.rule}: ${r.ok ? '' : r.message}`);
      n++;
    }
    assert.ok(n >= 25, `${n} outputs`);
  });
}

test('alerts: appended fields go to output_fields only, typed; the message is the rule output alone', () => {
  const out = parseOutput('syscall', 'p=%proc.name pid=%proc.pid');
  const extra = parseOutput('syscall', '%proc.name %proc.exepath %proc.pid %proc.tty %user.uid');
  if (!out.ok || !extra.ok) throw new Error('parse');
  const rule = { name: 'r', priority: 'Warning', source: 'syscall', tags: [], output: out.tokens } as unknown as LoadedRule;
  const values: Record<string, RawValue> = { 'proc.name': 'cat', 'proc.pid': 7n, 'proc.exepath': '/bin/cat', 'user.uid': 0 };
  const fields = extra.tokens.filter((t) => t.kind === 'field');
  const alert = alertFor(rule, { source: 'syscall', timeNs: 0n, fields: { field: (ref) => values[ref.canonical] } }, 'h', 64 * 1024, fields);
  assert.is(alert.message, 'p=cat pid=7');
  assert.equal(alert.outputFields, { 'proc.name': 'cat', 'proc.pid': 7, 'proc.exepath': '/bin/cat', 'proc.tty': null, 'user.uid': 0 });
});

test.run();
