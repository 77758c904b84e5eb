// Table tests for the condition parser: accepted conditions and their canonical print. Verdicts come from libsinsp's filter_parser.ut.cpp
// (parse_smoke_test, parse_str, parse_numbers, parse_lists, parse_operators, transformers left
// and right hand, position_*), Falco's test_rule_loader.cpp, and reference/falco-language.md
// A.1-A.6; expected messages and offsets follow libsinsp parser.cpp's cursor step by step.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { printExpr } from '../../host/engine/printer.js';
import { parsed } from '../helpers/parser-cases.js';

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

test.run();
