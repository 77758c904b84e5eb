// Table tests for the condition parser: the AST (shape, decoded values, spans) and the limits. Verdicts come from libsinsp's filter_parser.ut.cpp
// (parse_smoke_test, parse_str, parse_numbers, parse_lists, parse_operators, transformers left
// and right hand, position_*), Falco's test_rule_loader.cpp, and reference/falco-language.md
// A.1-A.6; expected messages and offsets follow libsinsp parser.cpp's cursor step by step.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Expr, Operand, Rhs, TransformerArg } from '../../host/engine/ast.js';
import { parseCondition } from '../../host/engine/parser.js';
import { printExpr } from '../../host/engine/printer.js';
import { err, parsed } from '../helpers/parser-cases.js';

// ---- AST shape ---------------------------------------------------------------------------------
test('values are decoded and marked quoted; identifiers after list operators are values', () => {
  const e = parsed(`a.b in (x, 'y z', "w") and c.d = "q" and e.f in lst and g.h[""] exists and i.j[k] exists`);
  assert.equal(strip(e), {
    kind: 'and',
    children: [
      {
        kind: 'binary',
        left: { kind: 'field', name: 'a.b' },
        op: 'in',
        right: {
          kind: 'list',
          values: [
            { kind: 'value', value: 'x', quoted: false },
            { kind: 'value', value: 'y z', quoted: true },
            { kind: 'value', value: 'w', quoted: true },
          ],
        },
      },
      { kind: 'binary', left: { kind: 'field', name: 'c.d' }, op: '=', right: { kind: 'value', value: 'q', quoted: true } },
      { kind: 'binary', left: { kind: 'field', name: 'e.f' }, op: 'in', right: { kind: 'value', value: 'lst', quoted: false } },
      { kind: 'unary', left: { kind: 'field', name: 'g.h', arg: '' }, op: 'exists' },
      { kind: 'unary', left: { kind: 'field', name: 'i.j', arg: 'k' }, op: 'exists' },
    ],
  });
});

test('transformer arguments, lists, keys and modifiers in the AST', () => {
  assert.equal(strip(parsed('getopt(proc.args, "a:")[a] == oneof (x)')), {
    kind: 'binary',
    left: {
      kind: 'transformer',
      name: 'getopt',
      args: [
        { kind: 'field', name: 'proc.args' },
        { kind: 'value', value: 'a:', quoted: true },
      ],
      arg: 'a',
    },
    op: '==',
    modifier: 'oneof',
    right: { kind: 'list', values: [{ kind: 'value', value: 'x', quoted: false }] },
  });
  assert.equal(strip(parsed('join(",", (proc.name, 3)) = val(proc.pname)')), {
    kind: 'binary',
    left: {
      kind: 'transformer',
      name: 'join',
      args: [
        { kind: 'value', value: ',', quoted: true },
        {
          kind: 'tr-list',
          items: [
            { kind: 'field', name: 'proc.name' },
            { kind: 'value', value: '3', quoted: false },
          ],
        },
      ],
    },
    op: '=',
    right: { kind: 'val', field: { kind: 'field', name: 'proc.pname' } },
  });
});

const ESCAPES: Array<[string, string]> = [
  ['"abc"', 'abc'],
  ["'abc'", 'abc'],
  ['""', ''],
  [String.raw`"\b\f\n\r\t"`, '\b\f\n\r\t'],
  [String.raw`"a\/b"`, 'a/b'],
  [String.raw`"a\\b"`, 'a\\b'],
  [String.raw`"a\ b"`, 'a\\b'], // legacy: backslash-space is one backslash
  [String.raw`"\x41\x62c"`, 'Abc'],
  [String.raw`"\x00"`, '\0'],
  [String.raw`"\x5C"`, '\\'],
  [String.raw`"say \"hi\""`, 'say "hi"'],
  [String.raw`'it\'s'`, "it's"],
  [`"it's"`, "it's"],
  [`'say "hi"'`, 'say "hi"'],
  [String.raw`'a \\'b'`, String.raw`a \'b`], // the quote after `\\` does not close (A.2)
];

test('string escapes decode as in escaping.cpp', () => {
  for (const [tok, value] of ESCAPES) {
    const e = parsed(`a.b = ${tok}`);
    assert.ok(e.kind === 'binary' && e.right.kind === 'value', tok);
    if (e.kind === 'binary' && e.right.kind === 'value') assert.is(e.right.value, value, tok);
  }
});

// ---- spans (libsinsp position_* tests, as node start offsets) ----------------------------------
const POSITIONS: Array<[string, string]> = [
  ['proc.name exists', 'unary0 field0'],
  ['proc.name=nginx', 'binary0 field0 value10'],
  ['proc.aname[3]=nginx', 'binary0 field0 value14'],
  ['proc.name =nginx', 'binary0 field0 value11'],
  ['proc.name= nginx', 'binary0 field0 value11'],
  ['proc.name = nginx', 'binary0 field0 value12'],
  ['proc.name in (nginx, apache)', 'binary0 field0 list13'],
  ['proc.name in ( nginx, apache)', 'binary0 field0 list13'],
  ['not proc.name=nginx', 'not0 binary4 field4 value14'],
  ['proc.name=nginx or proc.name=apache', 'or0 binary0 field0 value10 binary19 field19 value29'],
  ['(proc.name=nginx or proc.name=apache)', 'or1 binary1 field1 value11 binary20 field20 value30'],
  ['proc.name=nginx and proc.name=apache', 'and0 binary0 field0 value10 binary20 field20 value30'],
  ['(proc.name=nginx and proc.name=apache)', 'and1 binary1 field1 value11 binary21 field21 value31'],
  [
    '(proc.aname[2]=nginx and evt.type in (connect,accept)) or (not fd.name exists) or (proc.name=apache and evt.type=switch)',
    'or0 and1 binary1 field1 value15 binary25 field25 list37 not59 unary63 field63 and83 binary83 field83 value93 binary104 field104 value113',
  ],
  // libsinsp records the `or` before the leading newline (0); spans start at the first token (1).
  [
    '\n(proc.aname[2]=nginx\n     and evt.type in (connect,accept))\n   or (not fd.name exists)\n   or (proc.name=apache\n       and evt.type=switch)',
    'or1 and2 binary2 field2 value16 binary31 field31 list43 not68 unary72 field72 and95 binary95 field95 value105 binary123 field123 value132',
  ],
  [
    'b64(evt.name) exists and tolower(toupper(evt.type)) in val(some.field) and not evt.dir=b64(some.field) or proc.name=b64(tolower(some.field))',
    'or0 and0 unary0 transformer0 field4 binary25 transformer25 transformer33 field41 transformer55 field59 not75 binary79 field79 transformer87 field91 binary106 field106 transformer116 transformer120 field128',
  ],
];

test('node start offsets match libsinsp positions', () => {
  for (const [text, want] of POSITIONS) assert.is(starts(parsed(text)).join(' '), want, JSON.stringify(text));
});

const SPANS: Array<[string, string]> = [
  ['proc.name = nginx', 'binary0-17 field0-9 value12-17'],
  ['a.b = "x y" ', 'binary0-11 field0-3 value6-11'],
  ['  not (a) ', 'not2-9 identifier7-8'],
  ['(a and b)', 'and1-8 identifier1-2 identifier7-8'],
  ['a.b in (x, y)', 'binary0-13 field0-3 list7-13'],
  ['a.b[k] exists', 'unary0-13 field0-6'],
  ['tolower(a.b) = val(c.d)', 'binary0-23 transformer0-12 field8-11 transformer15-23 field19-22'],
  ['getopt(a.b, "x")[x] exists', 'unary0-26 transformer0-19 field7-10 value12-15'],
  ['x or (y)', 'or0-8 identifier0-1 identifier6-7'],
];

test('node spans cover their tokens, blanks excluded', () => {
  for (const [text, want] of SPANS) assert.is(spans(parsed(text)).join(' '), want, JSON.stringify(text));
});

// ---- limits ------------------------------------------------------------------------------------
test('depth guard: libsinsp counts about five levels per parenthesis', () => {
  const nest = (k: number, inner: string): string => '('.repeat(k) + inner + ')'.repeat(k);
  assert.ok(parseCondition(nest(199, 'a')).ok);
  assert.equal(err(nest(200, 'a')), { message: 'exceeded max depth limit of 1000', offset: 200 });
  assert.ok(parseCondition(nest(198, 'a.b = c')).ok);
  assert.equal(err(nest(199, 'a.b = c')), { message: 'exceeded max depth limit of 1000', offset: 202 });
  assert.equal(err('a', { maxDepth: 4 }), { message: 'exceeded max depth limit of 4', offset: 0 });
  assert.ok(parseCondition('a', { maxDepth: 5 }).ok);
  assert.equal(err('((a))', { maxDepth: 14 }), { message: 'exceeded max depth limit of 14', offset: 2 });
  assert.ok(parseCondition('((a))', { maxDepth: 15 }).ok);
});

test('deep and long inputs fail or pass without overflowing the stack', () => {
  const N = 100_000;
  assert.equal(err('('.repeat(N) + 'a' + ')'.repeat(N)), { message: 'exceeded max depth limit of 1000', offset: 200 });
  assert.equal(err('not('.repeat(N) + 'a' + ')'.repeat(N)).message, 'exceeded max depth limit of 1000');
  assert.equal(err('tolower('.repeat(N) + 'a.b' + ')'.repeat(N) + ' exists').message, 'exceeded max depth limit of 1000');
  assert.equal(err('('.repeat(N) + 'a' + ')'.repeat(N), { maxDepth: 1e9 }).message, 'exceeded max depth limit of 2000');
  const chain = Array.from({ length: 50_000 }, (_, i) => `a.b = ${i}`).join(' and ');
  const e = parsed(chain);
  assert.is(e.kind === 'and' ? e.children.length : 0, 50_000);
  assert.ok(printExpr(e).startsWith('(a.b = 0 and a.b = 1 and '));
  const nots = parsed('not '.repeat(100_001) + 'a');
  assert.is(nots.kind, 'not');
});

test('input length limit', () => {
  assert.equal(err('a'.repeat(11), { maxLength: 10 }), { message: 'filter input string exceeds the maximum length of 10', offset: 10 });
  assert.ok(parseCondition('a'.repeat(10), { maxLength: 10 }).ok);
});

// ---- helpers -----------------------------------------------------------------------------------

type Node = Expr | Operand | Rhs | TransformerArg;

/** The node and its children in preorder, as libsinsp's pos_visitor walks them. */
function preorder(n: Node, out: Node[] = []): Node[] {
  out.push(n);
  switch (n.kind) {
    case 'and':
    case 'or':
      n.children.forEach((c) => preorder(c, out));
      break;
    case 'not':
      preorder(n.child, out);
      break;
    case 'unary':
      preorder(n.left, out);
      break;
    case 'binary':
      preorder(n.left, out);
      preorder(n.right, out);
      break;
    case 'transformer':
      n.args.forEach((a) => preorder(a, out));
      break;
    case 'val':
      preorder(n.field, out);
      break;
    default:
      break;
  }
  return out;
}

/** Start offsets; `val(f)` is a transformer in libsinsp's AST. */
function starts(e: Expr): string[] {
  return preorder(e).map((n) => `${n.kind === 'val' ? 'transformer' : n.kind}${n.span.start}`);
}

function spans(e: Expr): string[] {
  return preorder(e).map((n) => `${n.kind === 'val' ? 'transformer' : n.kind}${n.span.start}-${n.span.end}`);
}

/** The tree without spans, for structural comparison. */
function strip(n: unknown): unknown {
  if (Array.isArray(n)) return n.map(strip);
  if (n === null || typeof n !== 'object') return n;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) if (k !== 'span') out[k] = strip(v);
  return out;
}

test.run();
