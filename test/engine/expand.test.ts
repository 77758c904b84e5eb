// Lists, macros, appends, overrides and exceptions, compared as canonical prints of the
// expanded condition (the style of falco's unit_tests/engine/test_rule_loader.cpp).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { printExpr } from '../../host/engine/printer.js';
import { headlines, load } from './helpers.js';

function compiled(yaml: string, rule = 'r'): string {
  const r = load(yaml);
  assert.equal(
    r.diagnostics.filter((d) => d.severity === 'error'),
    [],
    'no errors',
  );
  const found = r.ruleset.rules.find((x) => x.name === rule);
  assert.ok(found, `rule ${rule} loaded`);
  return printExpr(found!.expanded);
}

const RULE = (cond: string) => `- rule: r\n  desc: d\n  condition: ${cond}\n  output: o\n  priority: INFO\n`;

const cases: Array<[string, string, string]> = [
  ['plain list in list literal', `- list: shells\n  items: [bash, sh]\n${RULE('proc.name in (shells)')}`, 'proc.name in (bash, sh)'],
  ['list inside a list literal with another value', `- list: opens\n  items: [open, openat]\n${RULE('evt.type in (opens, openat2)')}`, 'evt.type in (open, openat, openat2)'],
  ['empty list removes its comma', `- list: none\n  items: []\n${RULE('proc.name in (none, cat)')}`, 'proc.name in (cat)'],
  ['item with a space is quoted', `- list: l\n  items: ["a b", c]\n${RULE('proc.cmdline in (l)')}`, 'proc.cmdline in ("a b", c)'],
  ['list name inside a word is not substituted', `- list: sh\n  items: [x]\n${RULE('proc.name = bash')}`, 'proc.name = bash'],
  ['list-in-list, one level', `- list: a\n  items: [x, y]\n- list: b\n  items: [a, z]\n${RULE('proc.name in (b)')}`, 'proc.name in (x, y, z)'],
  ['macro becomes its body', `- macro: m\n  condition: proc.name = cat\n${RULE('evt.type = open and m')}`, '(evt.type = open and proc.name = cat)'],
  ['macro using an earlier macro', `- macro: a\n  condition: proc.name = cat\n- macro: b\n  condition: a or proc.name = dog\n${RULE('b')}`, '(proc.name = cat or proc.name = dog)'],
  [
    'falco condition_append example',
    `- macro: interactive\n  condition: >\n    ((proc.aname=sshd and proc.name != sshd) or\n    proc.name=systemd-logind or proc.name=login)\n- macro: interactive\n  condition: or proc.name = ssh\n  append: true\n${RULE('evt.type=open and (interactive)')}`,
    '(evt.type = open and (((proc.aname = sshd and proc.name != sshd) or proc.name = systemd-logind or proc.name = login) or proc.name = ssh))',
  ],
  ['override append on a list', `- list: l\n  items: [a]\n- list: l\n  items: [b]\n  override:\n    items: append\n${RULE('proc.name in (l)')}`, 'proc.name in (a, b)'],
  ['override replace on a macro', `- macro: m\n  condition: proc.name = a\n- macro: m\n  condition: proc.name = b\n  override:\n    condition: replace\n${RULE('m')}`, 'proc.name = b'],
  ['rule condition append', `${RULE('evt.type = open')}- rule: r\n  condition: and proc.name = cat\n  override:\n    condition: append\n`, '(evt.type = open and proc.name = cat)'],
  [
    'exception, list form with a modifier comp (falco example)',
    `- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: INFO\n  exceptions:\n    - name: e\n      fields: [proc.name, fd.name]\n      comps: [startswith oneof, startswith]\n      values:\n        - [[sshd, sudo], /etc/]\n`,
    '(evt.type = open and not (proc.name startswith oneof (sshd, sudo) and fd.name startswith /etc/))',
  ],
  [
    'exception, string form',
    `- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: INFO\n  exceptions:\n    - name: e\n      fields: proc.name\n      values: [cat, "my app"]\n`,
    '(evt.type = open and not proc.name in (cat, "my app"))',
  ],
  [
    'exception with a quoted value (falco example)',
    `- rule: r\n  desc: d\n  condition: proc.cmdline contains curl or proc.cmdline contains wget\n  output: o\n  priority: INFO\n  exceptions:\n    - name: e\n      fields: [proc.cmdline]\n      comps: [contains]\n      values:\n        - [curl 127.0.0.1]\n`,
    '((proc.cmdline contains curl or proc.cmdline contains wget) and not proc.cmdline contains "curl 127.0.0.1")',
  ],
  ['exception without values adds nothing', `- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: INFO\n  exceptions:\n    - name: e\n      fields: [proc.name]\n`, 'evt.type = open'],
];

for (const [name, yaml, expected] of cases) {
  test(`expand: ${name}`, () => {
    assert.is(compiled(yaml), expected);
  });
}

test('expand: redefinition keeps position but replaces content', () => {
  const r = load(`${RULE('proc.name = a').replace('- rule: r', '- rule: first')}${RULE('proc.name = b')}${RULE('proc.name = c').replace('- rule: r', '- rule: first')}`);
  assert.equal(
    r.ruleset.rules.map((x) => [x.name, printExpr(x.expanded)]),
    [
      ['first', 'proc.name = c'],
      ['r', 'proc.name = b'],
    ],
  );
});

test('expand: a macro cannot use a macro defined after it; a rule can', () => {
  const bad = load(`- macro: a\n  condition: b\n- macro: b\n  condition: proc.name = x\n${RULE('a')}`);
  assert.equal(headlines(bad), [
    "rules.yaml:2:14: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Undefined macro 'b' used in filter.",
    "rules.yaml:7:14: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Macro 'a' has an invalid condition",
  ]);
  assert.is(compiled(`${RULE('b')}- macro: b\n  condition: proc.name = x\n`), 'proc.name = x');
});

test('expand: reference loop through a redefinition', () => {
  const r = load(`- macro: a\n  condition: proc.name = x\n- macro: a\n  condition: a and proc.name = y\n${RULE('a')}`);
  assert.ok(
    headlines(r).some((h) => h.includes("reference loop in macro 'a'")),
    headlines(r).join('\n'),
  );
});

test('expand: unused macro and list warnings', () => {
  const r = load(`- list: lonely\n  items: [a]\n- macro: idle\n  condition: proc.name = a\n${RULE('evt.type = open and proc.name = b')}`);
  assert.equal(headlines(r), [
    'rules.yaml:1:3: warning LOAD_UNUSED_LIST (Unused list): List not referred to by any other rule/macro',
    'rules.yaml:3:3: warning LOAD_UNUSED_MACRO (Unused macro): Macro not referred to by any other rule/macro',
  ]);
});

test('expand: rule with enabled-only item is disabled, with a deprecation warning', () => {
  const r = load(`${RULE('proc.name = a')}- rule: r\n  enabled: false\n`);
  assert.is(r.ruleset.rules[0]!.enabled, false);
  assert.ok(
    headlines(r).some((h) => h.startsWith('rules.yaml:6:3: warning LOAD_DEPRECATED_ITEM')),
    headlines(r).join('\n'),
  );
});

test.run();
