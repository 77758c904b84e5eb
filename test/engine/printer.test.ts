// Table tests for the canonical printer and escaping (libsinsp ast.cpp string_visitor,
// escaping.cpp escape_str/unescape_str, filter_escaping.ut.cpp), plus the round-trip property
// over every condition of the four corpus rule files: parse, print, parse the print, print again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import type { Expr } from '../../host/engine/ast.js';
import { escapeStr, unescapeQuoted } from '../../host/engine/escaping.js';
import { parseCondition } from '../../host/engine/parser.js';
import { printExpr, printValue } from '../../host/engine/printer.js';
import { corpusText } from '../../support/corpus.js';

const S = { start: 0, end: 0 };

// escape_str: raw unless one of \b \f \n \r \t space = \ " ' NUL appears.
const VALUES: Array<[string, string]> = [
  ['some string', '"some string"'], // filter_escaping_test.spaces
  [String.raw`some\b\f\n\r\tstring`, String.raw`"some\\b\\f\\n\\r\\tstring"`], // ws_chars
  ['some "quoted string"', String.raw`"some \"quoted string\""`], // double_quotes
  ["some 'quoted string'", `"some 'quoted string'"`], // single_quotes
  ['plain', 'plain'],
  ['/etc/*', '/etc/*'],
  ['<NA>', '<NA>'],
  ['a,b', 'a,b'], // upstream quotes only on the characters above
  ['(x)', '(x)'],
  ['a=b', '"a=b"'],
  ["it's", `"it's"`],
  ['\b\f\n\r\t', String.raw`"\b\f\n\r\t"`],
  ['tab\there', String.raw`"tab\there"`],
  ['nul\0x', String.raw`"nul\x00x"`],
  ['a\\b', String.raw`"a\\b"`],
  ['', '""'], // ours: upstream prints nothing
  ['\\', String.raw`"\x5c"`], // ours: `"\\"` would never close
  ['a \\', String.raw`"a \x5c"`],
];

test('printValue quotes and escapes like escape_str', () => {
  for (const [v, want] of VALUES) assert.is(printValue(v), want, JSON.stringify(v));
});

test('escaped values decode back to themselves', () => {
  for (const [v] of VALUES) {
    const printed = escapeStr(v);
    if (!printed.startsWith('"')) continue;
    const r = unescapeQuoted(printed);
    assert.equal(r, { ok: true, value: v }, JSON.stringify(v));
  }
});

const UNESCAPE_ERRORS: Array<[string, string]> = [
  [String.raw`"\q"`, String.raw`unsupported string escape sequence: \q`],
  [String.raw`"\v"`, String.raw`unsupported string escape sequence: \v`],
  [String.raw`"\x4g"`, String.raw`unsupported string escape sequence: \x`],
  [String.raw`"\x"`, String.raw`unsupported string escape sequence: \x`],
  [String.raw`"\'"`, `invalid \\' escape in "-quoted string`],
  [String.raw`'\"'`, `invalid \\" escape in '-quoted string`],
];

test('unsupported escapes are errors', () => {
  for (const [raw, message] of UNESCAPE_ERRORS) assert.equal(unescapeQuoted(raw), { ok: false, message }, raw);
});

test('hand-built trees print in string_visitor form', () => {
  const f = (name: string, arg?: string) => (arg === undefined ? { kind: 'field' as const, name, span: S } : { kind: 'field' as const, name, arg, span: S });
  const v = (value: string) => ({ kind: 'value' as const, value, quoted: false, span: S });
  const check = (name: string, value: string): Expr => ({ kind: 'binary', left: f(name), op: '=', right: v(value), span: S });
  const tree: Expr = {
    kind: 'or',
    span: S,
    children: [
      { kind: 'and', span: S, children: [check('a.b', 'x y'), { kind: 'not', span: S, child: { kind: 'identifier', name: 'm', span: S } }] },
      { kind: 'unary', left: f('evt.arg', ''), op: 'exists', span: S },
      { kind: 'binary', left: f('proc.aname', '2'), op: 'in', right: { kind: 'list', values: [v('a'), v(''), v('b c')], span: S }, span: S },
      { kind: 'macro', name: 'mac', span: S, body: { kind: 'and', span: S, children: [check('c.d', '1'), check('e.f', '2')] } },
      { kind: 'binary', left: f('g.h'), op: '!=', modifier: 'anyof', right: { kind: 'list', values: [v('p')], span: S }, span: S },
    ],
  };
  assert.is(printExpr(tree), '((a.b = "x y" and not m) or evt.arg[""] exists or proc.aname[2] in (a, "", "b c") or (c.d = 1 and e.f = 2) or g.h != anyof (p))');
});

test('a macro node prints as its body', () => {
  const body = parse('proc.name in (sshd, login)');
  assert.is(printExpr({ kind: 'macro', name: 'interactive', body, span: S }), 'proc.name in (sshd, login)');
  assert.is(printExpr({ kind: 'not', child: { kind: 'macro', name: 'x', body, span: S }, span: S }), 'not proc.name in (sshd, login)');
});

test('printing a very deep tree does not overflow the stack', () => {
  let e: Expr = { kind: 'identifier', name: 'a', span: S };
  for (let i = 0; i < 100_000; i++) {
    e = { kind: 'not', child: e, span: S };
    e = { kind: 'macro', name: 'm', body: e, span: S };
  }
  assert.is(printExpr(e), 'not '.repeat(100_000) + 'a');
});

// ---- corpus round trip --------------------------------------------------------------------------
const FILES = ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml', 'k8s_audit_rules.yaml'];

function conditions(file: string): Array<{ name: string; condition: string }> {
  const out: Array<{ name: string; condition: string }> = [];
  for (const doc of parseAllDocuments(corpusText(file))) {
    const items = doc.toJS() as unknown;
    if (!Array.isArray(items)) continue;
    for (const it of items as Array<Record<string, unknown>>) {
      if (typeof it.condition === 'string') out.push({ name: String(it.rule ?? it.macro), condition: it.condition });
    }
  }
  return out;
}

test('every corpus condition parses, and its print parses to the same print', () => {
  let total = 0;
  for (const file of FILES) {
    const conds = conditions(file);
    assert.ok(conds.length > 0, file);
    for (const { name, condition } of conds) {
      total++;
      const first = parseCondition(condition);
      if (!first.ok) assert.unreachable(`${file} ${name}: ${first.error.message} at ${first.error.offset}`);
      else {
        const printed = printExpr(first.expr);
        const again = parseCondition(printed);
        if (!again.ok) assert.unreachable(`${file} ${name}: print does not parse: ${again.error.message} at ${again.error.offset}`);
        else assert.is(printExpr(again.expr), printed, `${file} ${name}`);
      }
    }
  }
  assert.ok(total >= 500, `only ${total} conditions`);
});

test('corpus spot checks: macros stay identifiers, list names inside parentheses are values', () => {
  assert.is(printExpr(parse('spawned_process and proc.name in (shell_binaries) and not user_expected_x')), '(spawned_process and proc.name in (shell_binaries) and not user_expected_x)');
  assert.is(printExpr(parse(String.raw`(proc.args contains "\ " or proc.args endswith \)`)), String.raw`(proc.args contains "\x5c" or proc.args endswith "\x5c")`);
  assert.is(printExpr(parse(`(container and not user.name in ("<NA>","N/A",""))`)), '(container and not user.name in (<NA>, N/A, ""))');
});

function parse(text: string): Expr {
  const r = parseCondition(text);
  if (!r.ok) throw new Error(`${text}: ${r.error.message} at ${r.error.offset}`);
  return r.expr;
}

test.run();
