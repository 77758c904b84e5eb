// Table tests for the condition parser: rejected conditions with their message and offset. Verdicts come from libsinsp's filter_parser.ut.cpp
// (parse_smoke_test, parse_str, parse_numbers, parse_lists, parse_operators, transformers left
// and right hand, position_*), Falco's test_rule_loader.cpp, and reference/falco-language.md
// A.1-A.6; expected messages and offsets follow libsinsp parser.cpp's cursor step by step.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCondition } from '../../host/engine/parser.js';
import { after, ARG, blankAfter, CHECK, CLOSE_TR, LISTV, NUMV, OPS, STRV, TRARG } from '../helpers/parser-cases.js';

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

test.run();
