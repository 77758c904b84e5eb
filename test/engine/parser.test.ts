// Table tests for the condition parser. Verdicts come from libsinsp's filter_parser.ut.cpp
// (parse_smoke_test, parse_str, parse_numbers, parse_lists, parse_operators, transformers left
// and right hand, position_*), Falco's test_rule_loader.cpp, and reference/falco-language.md
// A.1-A.6; expected messages and offsets follow libsinsp parser.cpp's cursor step by step.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Expr, Operand, Rhs, TransformerArg } from '../../host/engine/ast.js';
import { parseCondition } from '../../host/engine/parser.js';
import { printExpr } from '../../host/engine/printer.js';

const TR = "'val', 'tolower', 'toupper', 'b64', 'basename', 'len', 'join', 'concat', 'getopt'";
const OPS =
  "expected a valid check operator: one of 'exists', '<=', '<', '>=', '>', '==', '=', '!=', 'glob', " + "'iglob', 'contains', 'icontains', 'bcontains', 'startswith', 'bstartswith', 'endswith', 'regex', " + "'intersects', 'in', 'pmatch'";
const STRV = `expected a string value or a field with a valid transformer: ${TR}`;
const NUMV = `expected a number value or a field with a valid transformer: ${TR}`;
const LISTV = `expected a list, an identifier, or a field with a valid transformer: ${TR}`;
const CHECK = "expected a '(' token, a field check, or an identifier";
const ARG = 'expected a valid field argument: a quoted string or a bare string';
const TRARG = 'expected field transformer argument: field, transformer, quoted string, number, or transformer list';
const CLOSE_TR = "expected a ')' token closing the transformer";
const after = (tok: string): string => `unexpected token after '${tok}', expecting 'or', 'and'`;
const blankAfter = (kw: string): string => `expected blank or '(' after '${kw}'`;

function parsed(text: string): Expr {
  const r = parseCondition(text);
  if (!r.ok) throw new Error(`${JSON.stringify(text)}: ${r.error.message} at ${r.error.offset}`);
  return r.expr;
}

// ---- accepted (upstream test_accept), each with its canonical print ------------------------------
const ACCEPT: Array<[string, string]> = [
  ['  a', 'a'],
  ['(a)', 'a'],
  ['a and b', '(a and b)'],
  ['a and b and c', '(a and b and c)'],
  ['a and b and(c)', '(a and b and c)'],
  ['(a)and(b)and(c)', '(a and b and c)'],
  ['(a and b)', '(a and b)'],
  ['a or b', '(a or b)'],
  ['a or b or c', '(a or b or c)'],
  ['a or b or(c)', '(a or b or c)'],
  ['(a)or(b)or(c)', '(a or b or c)'],
  ['(a or b)', '(a or b)'],
  ['(a.a exists and b)', '(a.a exists and b)'],
  ['(a.a exists) and (b)', '(a.a exists and b)'],
  ['a.a exists and b', '(a.a exists and b)'],
  ['a.a=1 or b.b=2 and c', '(a.a = 1 or (b.b = 2 and c))'],
  ['not (a)', 'not a'],
  ['not(a)', 'not a'],
  ['not (not (a))', 'not not a'],
  ['not (a.b=1)', 'not a.b = 1'],
  ['not (a.a exists)', 'not a.a exists'],
  ['not a', 'not a'],
  ['a.b = 1 and not a', '(a.b = 1 and not a)'],
  ['not not a', 'a'],
  ['(not not a)', 'a'],
  ['not not(a)', 'a'],
  ['not(not(a))', 'not not a'],
  ['not(a)and(not(b))', '(not a and not b)'],
  ['not a.b=1', 'not a.b = 1'],
  ['not a.a exists', 'not a.a exists'],
  ['a.b = bla', 'a.b = bla'],
  ["a.b = 'bla'", 'a.b = bla'],
  ['a.b = not', 'a.b = not'],
  ['a.b contains bla', 'a.b contains bla'],
  ["a.b icontains 'bla'", 'a.b icontains bla'],
  ["a.g in (1, 'a', b)", 'a.g in (1, a, b)'],
  ['evt.dir=> and fd.name=*.log', '(evt.dir = > and fd.name = *.log)'],
  ["a.g in (1, 'a', b.c)", 'a.g in (1, a, b.c)'],
  ['a.b = a.a', 'a.b = a.a'],
  ['a and notb', '(a and notb)'],
  ['a or notb', '(a or notb)'],
  ['notz and a and b', '(notz and a and b)'],
  ['macro and not_macro', '(macro and not_macro)'],
  ['macro and not not_macro', '(macro and not not_macro)'],
  ['macro and not(not_macro)', '(macro and not not_macro)'],
  ['((macro) and (not_macro))', '(macro and not_macro)'],
  ['macro and and_macro', '(macro and and_macro)'],
  ['((macro) and (and_macro))', '(macro and and_macro)'],
  ['macro and or_macro', '(macro and or_macro)'],
  ['((macro) and (or_macro))', '(macro and or_macro)'],
  ['evt.arg[0] contains /bin', 'evt.arg[0] contains /bin'],
  ['evt.arg[a] contains /bin', 'evt.arg[a] contains /bin'],
  // parse_str
  ['test.str = testval', 'test.str = testval'],
  [String.raw`test.str = 0a!@#456:/\.;!$%^&*[]{}|`, String.raw`test.str = "0a!@#456:/\\.;!$%^&*[]{}|"`],
  ['test.str = ""', 'test.str = ""'],
  ["test.str = ''", 'test.str = ""'],
  ['test.str = "0a!@#456:/.; !$%^&*[]{}|"', 'test.str = "0a!@#456:/.; !$%^&*[]{}|"'],
  ['test.str = "test value"', 'test.str = "test value"'],
  ["test.str = 'test value'", 'test.str = "test value"'],
  [String.raw`test.str[0a!@#456:/\.;!$%^&*(){}|] = testval`, String.raw`test.str["0a!@#456:/\\.;!$%^&*(){}|"] = testval`],
  ['test.str[aaaa1] = a', 'test.str[aaaa1] = a'],
  ['test.str[1234] = a', 'test.str[1234] = a'],
  ['test.str[+0.25e+10] = a', 'test.str[+0.25e+10] = a'],
  ['test.str[""] = empty', 'test.str[""] = empty'],
  ["test.str['a aa'] = a", 'test.str["a aa"] = a'],
  [String.raw`test.str["test \"with\"escaping"] = a`, String.raw`test.str["test \"with\"escaping"] = a`],
  [String.raw`test.str = "escape double quote \" "`, String.raw`test.str = "escape double quote \" "`],
  [String.raw`test.str = 'escape single quote \' '`, `test.str = "escape single quote ' "`],
  [String.raw`test.str = 'multiple escape single quote \' \\''`, String.raw`test.str = "multiple escape single quote ' \\'"`],
  [`test.str = 'mixed "'`, String.raw`test.str = "mixed \""`],
  [`test.str = "mixed '"`, `test.str = "mixed '"`],
  [String.raw`test.str = "bad escape \ " `, String.raw`test.str = "bad escape \x5c"`],
  // parse_numbers
  ['test.num > 1000', 'test.num > 1000'],
  ['test.num < +1', 'test.num < +1'],
  ['test.num >= -1', 'test.num >= -1'],
  ['test.num <= 0x12345', 'test.num <= 0x12345'],
  ['test.num <= 0XaB00AB', 'test.num <= 0XaB00AB'],
  ['test.num > 1.2', 'test.num > 1.2'],
  ['test.num < -1.2', 'test.num < -1.2'],
  ['test.num > -0.1222e+10', 'test.num > -0.1222e+10'],
  ['test.str = !0.1222e+10', 'test.str = !0.1222e+10'],
  ['test.str = 0xAAA.1', 'test.str = 0xAAA.1'],
  ['test.str = 0aaaaa', 'test.str = 0aaaaa'],
  ['test.str = a', 'test.str = a'],
  // parse_lists
  ['test.list in ()', 'test.list in ()'],
  ['test.list in (a)', 'test.list in (a)'],
  ["test.list in ('single-quoted')", 'test.list in (single-quoted)'],
  ['test.list in ("double-quoted")', 'test.list in (double-quoted)'],
  [String.raw`test.list in (0a!@#456:/\.;!$%^&*[]{}|)`, String.raw`test.list in ("0a!@#456:/\\.;!$%^&*[]{}|")`],
  [String.raw`test.list in (0a!@#456:/\.;!$%^&*[]{}|, value)`, String.raw`test.list in ("0a!@#456:/\\.;!$%^&*[]{}|", value)`],
  [`test.list in (value, "value", 'value')`, 'test.list in (value, value, value)'],
  ['test.list intersects (value)', 'test.list intersects (value)'],
  ['test.list pmatch (value)', 'test.list pmatch (value)'],
  // parse_operators
  ['test.op exists and macro', '(test.op exists and macro)'],
  ['test.op exists', 'test.op exists'],
  ['test.op = value', 'test.op = value'],
  ['test.op == value', 'test.op == value'],
  ['test.op != value', 'test.op != value'],
  ['test.op glob value', 'test.op glob value'],
  ['test.op iglob value', 'test.op iglob value'],
  ['test.op contains value', 'test.op contains value'],
  ['test.op icontains value', 'test.op icontains value'],
  ['test.op bcontains 48545450', 'test.op bcontains 48545450'],
  ['test.op startswith value', 'test.op startswith value'],
  ['test.op bstartswith 12ab001fc5', 'test.op bstartswith 12ab001fc5'],
  ['test.op endswith value', 'test.op endswith value'],
  ['test.op regex value', 'test.op regex value'],
  ['test.op > 1', 'test.op > 1'],
  ['test.op < 1', 'test.op < 1'],
  ['test.op >= 1', 'test.op >= 1'],
  ['test.op <= 1', 'test.op <= 1'],
  ['test.op in ()', 'test.op in ()'],
  ['test.op intersects ()', 'test.op intersects ()'],
  ['test.op pmatch ()', 'test.op pmatch ()'],
  ['test.op in()', 'test.op in ()'],
  ['test.op existsand macro', '(test.op exists and macro)'],
  // transformers, left hand
  ['tolower(test.field) exists', 'tolower(test.field) exists'],
  ['toupper(test.field) exists', 'toupper(test.field) exists'],
  ['b64(test.field) = value', 'b64(test.field) = value'],
  ['b64(test.field) != value', 'b64(test.field) != value'],
  ['b64(test.field) glob value', 'b64(test.field) glob value'],
  ["b64(test.field) exists or not b64(test.field) contains 'a'", '(b64(test.field) exists or not b64(test.field) contains a)'],
  ["not (b64(test.field) exists or b64(test.field) contains 'a')", 'not (b64(test.field) exists or b64(test.field) contains a)'],
  ['b64(toupper(test.field)) exists', 'b64(toupper(test.field)) exists'],
  ['\nb64(test.field) exists', 'b64(test.field) exists'],
  ['b64( test.field) exists', 'b64(test.field) exists'],
  ['b64(\ntest.field) exists', 'b64(test.field) exists'],
  ['b64(test.field\n) exists', 'b64(test.field) exists'],
  ['b64(test.field)\n exists', 'b64(test.field) exists'],
  ['b64( b64(test.field)) exists', 'b64(b64(test.field)) exists'],
  ['b64(b64(test.field)\n) exists', 'b64(b64(test.field)) exists'],
  // transformers, right hand
  ['some.field = test.field', 'some.field = test.field'],
  ['some.field = val(test.field)', 'some.field = val(test.field)'],
  ['some.field = tolower(test.field)', 'some.field = tolower(test.field)'],
  ['some.field iglob val(test.field)', 'some.field iglob val(test.field)'],
  ['some.field bstartswith b64(test.field)', 'some.field bstartswith b64(test.field)'],
  ['some.field > val(test.field)', 'some.field > val(test.field)'],
  ['some.field <= b64(test.field)', 'some.field <= b64(test.field)'],
  ['some.field in val(test.field)', 'some.field in val(test.field)'],
  ['some.field pmatch b64(test.field)', 'some.field pmatch b64(test.field)'],
  ['some.field = b64( b64(test.field))', 'some.field = b64(b64(test.field))'],
  ['some.field = b64(test.field)\n', 'some.field = b64(test.field)'],
  ['tolower(some.field) = b64(test.field) or tolower(other.field) = tolower(anoter.field)', '(tolower(some.field) = b64(test.field) or tolower(other.field) = tolower(anoter.field))'],
  ['some.field = b64 and(some_macro)', '(some.field = b64 and some_macro)'],
  ['some.field = b64 or(some_macro)', '(some.field = b64 or some_macro)'],
  ["some.field = 'some_fake_transformer(some_macro)'", 'some.field = some_fake_transformer(some_macro)'],
  // expr_all_node_types, expr_transformers, expr_multi_negation
  ['evt.name exists and evt.type in (a, b) and not evt.dir=< or proc.name=cat', '((evt.name exists and evt.type in (a, b) and not evt.dir = <) or proc.name = cat)'],
  [
    'b64(evt.name) exists and tolower(toupper(evt.type)) in val(some.field) and not evt.dir=b64(some.field) or proc.name=b64(tolower(some.field))',
    '((b64(evt.name) exists and tolower(toupper(evt.type)) in val(some.field) and not evt.dir = b64(some.field)) or proc.name = b64(tolower(some.field)))',
  ],
  ['not not not not not(not not(not not_macro))', 'not not not_macro'],
  // Falco test_rule_loader.cpp condition_compiled (conditions as Falco assembles them)
  ['evt.type=open and proc.name in (ash, bash, csh, ksh, sh, tcsh, zsh, dash, pwsh)', '(evt.type = open and proc.name in (ash, bash, csh, ksh, sh, tcsh, zsh, dash, pwsh))'],
  [
    'evt.type=open and (((proc.aname=sshd and proc.name != sshd) or\nproc.name=systemd-logind or proc.name=login)\n or proc.name = ssh)',
    '(evt.type = open and (((proc.aname = sshd and proc.name != sshd) or proc.name = systemd-logind or proc.name = login) or proc.name = ssh))',
  ],
  ['evt.type=open and proc.name = cat', '(evt.type = open and proc.name = cat)'],
  ['evt.type in (open,openat)', 'evt.type in (open, openat)'],
  ['(evt.type in (open,openat) or evt.type = openat2)', '(evt.type in (open, openat) or evt.type = openat2)'],
  ['evt.type in (open,openat) and proc.name = cat', '(evt.type in (open, openat) and proc.name = cat)'],
  ['evt.type = execve and proc.name in (blkid, "csi-provisioner", "csi-attacher")', '(evt.type = execve and proc.name in (blkid, csi-provisioner, csi-attacher))'],
  ['proc.name = cat', 'proc.name = cat'],
];

test('accepted conditions print in libsinsp form', () => {
  for (const [text, print] of ACCEPT) assert.is(printExpr(parsed(text)), print, JSON.stringify(text));
});

// ---- rejected, with libsinsp's message and cursor offset ----------------------------------------
const REJECT: Array<[string, string, number]> = [
  ['', 'filter input string is empty', 0],
  ['   ', CHECK, 3],
  ['a andb', blankAfter('and'), 5],
  ['aand b', after('aand'), 5],
  ['a and b and', blankAfter('and'), 11],
  ['a and b or', blankAfter('or'), 10],
  ['a and b not', after('b'), 8],
  ['and a', after('and'), 4],
  ['or a', after('or'), 3],
  ['a or b and', blankAfter('and'), 10],
  ['a or b or', blankAfter('or'), 9],
  ['a or b not', after('b'), 7],
  ['a not b and', after('a'), 2],
  ['a not b or', after('a'), 2],
  ['a not b not', after('a'), 2],
  ['a orb', blankAfter('or'), 4],
  ['aor b', after('aor'), 4],
  ['a and or b', after('or'), 9],
  ['a andor b', blankAfter('and'), 5],
  ['a not b', after('a'), 2],
  ['a notb', after('a'), 2],
  ['anot b', after('anot'), 5],
  ['a andnot b', blankAfter('and'), 5],
  ['a andnotb', blankAfter('and'), 5],
  ['(a)andnot(b)', blankAfter('and'), 6],
  ['a ornot b', blankAfter('or'), 4],
  ['a ornotb', blankAfter('or'), 4],
  ['(a)ornot(b)', blankAfter('or'), 5],
  ['evt.arg[] contains /bin', ARG, 8],
  ['a.b = b = 1', after('b'), 8],
  ['(a.b = 1', "expected a ')' token", 8],
  ['a.a invalidoperator xxx', after('validoperator'), 20], // `in` is a prefix of `invalidoperator`
  ['macro > 12', after('macro'), 6],
  ['a.g in ( 1 ,, , b)', 'expected a string value', 12],
  ['#a and b; a and b', CHECK, 0],
  ['#a and b; # ; ; a and b', CHECK, 0],
  ['evt.dir=> and fd.name=/var/lo);g/httpd.log', after('/var/lo'), 29],
  // parse_str
  ['test.str = a,', after('a'), 12],
  ['test.str = a=', after('a'), 12],
  [`test.str = a('")`, after('a'), 12],
  ["test.str = '", STRV, 11],
  ['test.str = "', STRV, 11],
  [`test.str = '"`, STRV, 11],
  [`test.str = "'`, STRV, 11],
  ['test.str = missing start quote', after('missing'), 19],
  ["test.str = 'missing end quote", STRV, 11],
  ['test.str = "broken escape double quote""', after('broken escape double quote'), 39],
  ["test.str = 'broken escape single quote''", after('broken escape single quote'), 39],
  [String.raw`test.str = "mixed \'"`, `invalid \\' escape in "-quoted string`, 21],
  [String.raw`test.str = 'mixed \"'`, `invalid \\" escape in '-quoted string`, 21],
  [String.raw`test.str[0a!@#456:/\.;!$%^&*[]{}] = testval`, "expected a ']' token", 28],
  ['test.str[] = testval', ARG, 9],
  ['test.str[[] = testval', ARG, 9],
  ['test.str[]] = testval', ARG, 9],
  ["test.str['''] = a", "expected a ']' token", 11],
  ['test.str[aaa"] = a', "expected a ']' token", 12],
  ['test.str[   test   ] = testval', ARG, 9],
  ['test.str[ = testval', ARG, 9],
  ['test.str] = testval', OPS, 8],
  // parse_numbers
  ['test.num > !0.1222e+10', NUMV, 11],
  ['test.num < 0xAAA.1', after('0xAAA'), 16],
  ['test.num >= 0aaaaa', after('0'), 13],
  ['test.num <= a', NUMV, 12],
  // parse_lists
  ['test.list in (', "expected a ')' token", 14],
  ['test.list in )', LISTV, 13],
  ['test.list in (value,)', 'expected a string value', 20],
  ['test.list in (value,,)', 'expected a string value', 20],
  ['test.list in (,)', "expected a ')' token", 14],
  ['test.list in (,   ,)', "expected a ')' token", 14],
  ['test.list > (value)', NUMV, 12],
  ['test.list = (value)', STRV, 12],
  ['test.list < (value)', NUMV, 12],
  ['test.list startswith (value)', STRV, 21],
  ['test.list bstartswith (value)', STRV, 22],
  ['test.list contains (value)', STRV, 19],
  ['test.list icontains (value)', STRV, 20],
  // parse_operators
  ['test.op ExIsTs', OPS, 8],
  ['test.op exists something', after('exists'), 15],
  ['test.op ===', STRV, 10],
  ['test.op !==', STRV, 10],
  ['test.op startswithvalue', OPS, 18],
  ['test.op bstartswithvalue', OPS, 19],
  ['test.op endswithvalue', OPS, 16],
  ['test.op containsvalue', OPS, 16],
  ['test.op icontainsvalue', OPS, 17],
  ['test.op bcontainsvalue', OPS, 17],
  ['test.op globvalue', OPS, 12],
  ['test.op iglobvalue', OPS, 13],
  ['test.op regexvalue', OPS, 13],
  // transformers, left hand
  ['val(test.field) exists', after('val'), 3],
  ['val(val(test.field)) exists', after('val'), 3],
  ['val(b64(test.field)) exists', after('val'), 3],
  ['b64(val(test.field)) exists', TRARG, 4],
  ['b64(test.field [1]) exists', CLOSE_TR, 15],
  ['some_fake_transformer(test.field) exists', after('some_fake_transformer'), 21],
  ['some_fake_transformer (test.field) exists', after('some_fake_transformer'), 22],
  ['some.fake.transformer(test.field) exists', OPS, 21],
  ['b64 (test.field) exists', after('b64'), 4],
  ['b64,(test.field) exists', after('b64'), 3],
  ['b64(testfield)) exists', TRARG, 4],
  ['b64(test_field)) exists', TRARG, 4],
  ['b64(b64)) exists', TRARG, 4],
  ['b64\n(test.field) exists', after('b64'), 4],
  ['b64(test.field exists', CLOSE_TR, 15],
  ['test.field) exists', OPS, 10],
  ['b64(b64(test.field exists', CLOSE_TR, 19],
  ['b64(b64(test.field) exists', CLOSE_TR, 20],
  ['b64(test.field)) exists', OPS, 15],
  ['(test.field) exists', OPS, 11],
  ['(test.field exists', "expected a ')' token", 18],
  ['a(test.field) exists', after('a'), 1],
  ['aaaa(test.field) exists', after('aaaa'), 4],
  ['a(b(test.field)) exists', after('a'), 1],
  // transformers, right hand
  ['some.field = b64and(some_macro)', after('b64and'), 19],
  ['some.field = b64or(some_macro)', after('b64or'), 18],
  ['some.field = val(test.field [1])', CLOSE_TR, 28],
  ['some.field = some_fake_transformer(test.field)', after('some_fake_transformer'), 34],
  ['some.field = some_fake_transformer (test.field)', after('some_fake_transformer'), 35],
  ['some.field = some.fake.transformer(test.field)', after('some.fake.transformer'), 34],
  ['some.field = val(val(test.field))', "expected a field within 'val' transformer", 17],
  ['some.field = val(toupper(test.field))', "expected a field within 'val' transformer", 17],
  ['some.field = b64(val(test.field))', TRARG, 17],
  ['some.field = b64 (test.field)', after('b64'), 17],
  ['some.field = b64,(test.field)', after('b64'), 16],
  ['some.field = (b64(test.field))', STRV, 13],
  ['some.field = (b64(test.field)', STRV, 13],
  ['some.field = b64(test.field))', after(')'), 28],
  ['some.field = b64(testfield))', TRARG, 17],
  ['some.field = ((b64(test.field)))', STRV, 13],
  ['some.field = b64\n(test.field)', after('b64'), 17],
  ['some.field = b64(test.field', CLOSE_TR, 27],
  ['some.field = test.field)', after('test.field'), 23],
  ['some.field = b64(b64(test.field', CLOSE_TR, 31],
  ['some.field = b64(b64(test.field)', CLOSE_TR, 32],
  ['some.field = (test.field)', STRV, 13],
  ['some.field = a(test.field)', after('a'), 14],
  ['some.field = aaaa(test.field)', after('aaaa'), 17],
  ['some.field in (b64(test.field))', "expected a ')' token", 18],
  ['some.field in (a, b64(test.field))', "expected a ')' token", 21],
  ['some.field in (a, b, b64(test.field))', "expected a ')' token", 24],
];

test('rejected conditions fail with libsinsp message and offset', () => {
  for (const [text, message, offset] of REJECT) {
    const r = parseCondition(text);
    assert.equal(r.ok ? 'accepted' : r.error, { message, offset }, JSON.stringify(text));
  }
});

// ---- quirks of the hand-written parser (reference A.1-A.4) ---------------------------------------
const QUIRKS: Array<[string, string]> = [
  ['x.y existsand z', '(x.y exists and z)'], // keywords are prefixes
  ['x.y inabc', 'x.y in abc'],
  ['x.y in(a)', 'x.y in (a)'],
  ['x.y intersects(a, b)', 'x.y intersects (a, b)'],
  ['notb', 'notb'], // `not` needs a space or `(` after it
  ['not_macro', 'not_macro'],
  ['not', 'not'], // a lone `not` is an identifier
  ['not not not a', 'not a'],
  ['not\ta', 'not a'],
  ['not\fa', 'not a'], // `not[[:space:]]+` takes \f although \f is no blank
  ['\b\ra.b exists\n', 'a.b exists'], // blanks are ` \t\b\r\n`
  ['a.b contains\tx', 'a.b contains x'],
  ['a.b containsin (x)', 'a.b in (x)'], // `contains` consumed without blank, then `in` lexed
  ['proc.name=cat', 'proc.name = cat'],
  ['a.b = x\by', 'a.b = "x\\by"'], // \b is a blank but not [[:space:]], so BareStr takes it
  ['a.b = <NA>', 'a.b = <NA>'],
  ['a.b = -1', 'a.b = -1'],
  ['a.b = /etc/*', 'a.b = /etc/*'],
  ['fd.num = 0x10', 'fd.num = 0x10'],
  [String.raw`a.b in ('\q')`, 'a.b in ()'], // a failing first element is swallowed: empty list
  ['x.y in my_list', 'x.y in my_list'], // an identifier after a list operator is one value
  ['x.y pmatch my_list', 'x.y pmatch my_list'],
  ['k8s.ns.name = default', 'k8s.ns.name = default'],
  ['evt.arg.flags contains O_CREAT', 'evt.arg.flags contains O_CREAT'],
  ['a.b=1 or b.b=2 and c', '(a.b = 1 or (b.b = 2 and c))'],
  ['not a.b=1 and c', '(not a.b = 1 and c)'],
  ['a and (b and c)', '(a and (b and c))'],
  ['(a or b) and (c or d)', '((a or b) and (c or d))'],
  ['((a))', 'a'],
];

test('quirks of libsinsp lexing', () => {
  for (const [text, print] of QUIRKS) assert.is(printExpr(parsed(text)), print, JSON.stringify(text));
});

const QUIRK_REJECT: Array<[string, string, number]> = [
  ['a and\fb', blankAfter('and'), 5], // \f is not a blank
  ['a.b = x\f', after('x'), 7],
  ["a.b = 'x'y", after('x'), 9],
  ['fd.1x = 1', after('fd'), 2], // each name component starts with a letter: `fd` is an identifier
  ['a.b EXISTS', OPS, 4],
  ['a AND b', after('a'), 2],
  [String.raw`a.b in ('\q', b)`, "expected a ')' token", 12],
  [String.raw`a.b in (a, '\q')`, String.raw`unsupported string escape sequence: \q`, 15],
  [String.raw`a.b = "\q"`, String.raw`unsupported string escape sequence: \q`, 10],
  [String.raw`a.b = '\x4'`, String.raw`unsupported string escape sequence: \x`, 11],
  [String.raw`a.b = "x\'"`, `invalid \\' escape in "-quoted string`, 11],
  ['a.b = "abc\0def"', STRV, 6], // a NUL ends the C string: the quote never closes
  ['x.y = (a)', STRV, 6], // lists only after list operators and modifiers
];

test('quirk rejections', () => {
  for (const [text, message, offset] of QUIRK_REJECT) {
    const r = parseCondition(text);
    assert.equal(r.ok ? 'accepted' : r.error, { message, offset }, JSON.stringify(text));
  }
});

// ---- newer syntax: modifiers (libs 0.25), transformers with lists and keys ------------------------
const NEWER: Array<[string, string]> = [
  ['proc.name == oneof (myexe, bash)', 'proc.name == oneof (myexe, bash)'],
  ['proc.name != allof (bash, sh)', 'proc.name != allof (bash, sh)'],
  ['proc.name contains anyof (my, exe)', 'proc.name contains anyof (my, exe)'],
  ['proc.name regex oneof (my.*, b.*)', 'proc.name regex oneof (my.*, b.*)'],
  ['toupper(proc.name) == oneof (MYEXE, BASH)', 'toupper(proc.name) == oneof (MYEXE, BASH)'],
  ['proc.name == oneof ()', 'proc.name == oneof ()'],
  ['proc.name = anyof shell_binaries', 'proc.name = anyof shell_binaries'],
  ['proc.name == oneof (myexe) and proc.name != allof (bash, sh)', '(proc.name == oneof (myexe) and proc.name != allof (bash, sh))'],
  ['proc.name = oneof and x', '(proc.name = oneof and x)'], // before and/or/not, `oneof` is a value
  ['(proc.name = oneof)', 'proc.name = oneof'],
  ['proc.name = oneof', 'proc.name = oneof'],
  ['len(proc.name) > 5', 'len(proc.name) > 5'],
  ['basename(proc.exe) = sh', 'basename(proc.exe) = sh'],
  ['concat(proc.name, "a b", 1, 0x1F) exists', 'concat(proc.name,"a b",1,0x1F) exists'],
  ['join("-", ()) exists', 'join(-,()) exists'],
  ['join("-", ( proc.name , tolower(proc.pname) , "x" , 2 )) = a', 'join(-,(proc.name, tolower(proc.pname), x, 2)) = a'],
  ['getopt(proc.args, "a:b")[a] = 1', 'getopt(proc.args,a:b)[a] = 1'],
];

test('modifiers and newer transformers', () => {
  for (const [text, print] of NEWER) assert.is(printExpr(parsed(text)), print, JSON.stringify(text));
});

const NEWER_REJECT: Array<[string, string, number]> = [
  ['proc.name =oneof (a)', after('oneof'), 17], // a blank must precede the modifier
  ['proc.name in oneof (a)', after('oneof'), 19], // no modifiers on list operators
  ['proc.name > oneof (1)', NUMV, 12],
  ['proc.name = ONEOF (a)', after('ONEOF'), 18],
  ['proc.name = oneof(a)', after('oneof'), 17],
  ['join(",", (a.b,)) exists', 'expected transformer list argument: field, transformer, quoted string, or number', 15],
  ['join(",", (a.b, "x" exists', "expected ')'", 20],
  ['join(",", (a.b) exists', CLOSE_TR, 16],
  ['getopt(a.b, "x")[] = 1', ARG, 17],
];

test('modifier and transformer rejections', () => {
  for (const [text, message, offset] of NEWER_REJECT) {
    const r = parseCondition(text);
    assert.equal(r.ok ? 'accepted' : r.error, { message, offset }, JSON.stringify(text));
  }
});

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
function err(text: string, options?: { maxDepth?: number; maxLength?: number }): { message: string; offset: number } {
  const r = parseCondition(text, options);
  if (r.ok) throw new Error(`accepted: ${text.slice(0, 80)}`);
  return r.error;
}

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
