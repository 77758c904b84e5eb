// Malformed rules files: every problem is a located diagnostic with a stable code, rendered as
// file:line:col, the context chain and a caret under the source. The table asserts the exact
// rendered text of the first error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { diagnosticJson } from '../../host/engine/diagnostics.js';
import { errors, load } from './helpers.js';

const cases: Array<[string, string, string]> = [
  [
    'bad YAML',
    '- rule: r\n  desc: [unclosed\n',
    `rules.yaml:3:1: error LOAD_ERR_YAML_PARSE (YAML parse error): Flow sequence in block collection must be sufficiently indented and end with a ]
    In rules content: (rules.yaml:1:1)
    rules content: (rules.yaml:3:1)
  3 | 
    | ^`,
  ],
  [
    'not a sequence',
    'rule: r\n',
    `rules.yaml:1:1: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Rules content is not yaml array of objects
    In rules content: (rules.yaml:1:1)
    rules content: (rules.yaml:1:1)
  1 | rule: r
    | ^`,
  ],
  [
    'unknown key',
    '- macro: m\n  condition: proc.name = a\n  conditon: proc.name = b\n',
    `rules.yaml:3:3: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Unknown key 'conditon' in macro item (known keys: macro, condition, append, override)
    In rules content: (rules.yaml:1:1)
    rules content item: (rules.yaml:1:3)
    value for 'conditon': (rules.yaml:3:3)
  3 |   conditon: proc.name = b
    |   ^`,
  ],
  [
    'undefined macro',
    '- rule: r\n  desc: d\n  condition: evt.type = open and not_a_macro\n  output: o\n  priority: INFO\n',
    `rules.yaml:3:34: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Undefined macro 'not_a_macro' used in filter.
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:3:34)
  3 |   condition: evt.type = open and not_a_macro
    |                                  ^`,
  ],
  [
    'undefined list',
    '- rule: r\n  desc: d\n  condition: evt.type = open and proc.name in my_shells\n  output: o\n  priority: INFO\n',
    `rules.yaml:3:47: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Undefined list 'my_shells' used in filter.
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:3:47)
  3 |   condition: evt.type = open and proc.name in my_shells
    |                                               ^`,
  ],
  [
    'unknown field in a folded condition',
    '- rule: r\n  desc: d\n  condition: >\n    evt.type = open\n    and proc.nmae = cat\n  output: o\n  priority: INFO\n',
    `rules.yaml:5:9: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): filter_check called with nonexistent field proc.nmae
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:5:9)
  5 |     and proc.nmae = cat
    |         ^`,
  ],
  [
    'unknown field inside a macro',
    '- macro: m\n  condition: proc.nmae = cat\n- rule: r\n  desc: d\n  condition: evt.type = open and m\n  output: o\n  priority: INFO\n',
    `rules.yaml:2:14: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): filter_check called with nonexistent field proc.nmae
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:3:3)
    rule condition: (rules.yaml:5:14)
    macro 'm': (rules.yaml:1:3)
    macro condition: (rules.yaml:2:14)
    condition expression 'proc.nmae = cat': (rules.yaml:2:14)
  2 |   condition: proc.nmae = cat
    |              ^`,
  ],
  [
    'bad priority',
    '- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: LOUD\n',
    `rules.yaml:5:13: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Invalid priority
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule priority: (rules.yaml:5:13)
  5 |   priority: LOUD
    |             ^`,
  ],
  [
    'unbalanced parenthesis',
    '- rule: r\n  desc: d\n  condition: evt.type = open and (proc.name = cat\n  output: o\n  priority: INFO\n',
    `rules.yaml:3:50: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): expected a ')' token
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:3:50)
  3 |   condition: evt.type = open and (proc.name = cat
    |                                                  ^`,
  ],
  [
    'wrong type of value in a condition',
    '- rule: r\n  desc: d\n  condition: evt.type = open and user.uid = root\n  output: o\n  priority: INFO\n',
    `rules.yaml:3:45: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): root is not a valid number
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:3:45)
  3 |   condition: evt.type = open and user.uid = root
    |                                             ^`,
  ],
  [
    'wrong YAML type of a key',
    '- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: INFO\n  tags: network\n',
    `rules.yaml:6:9: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Value is not a sequence
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    value for 'tags': (rules.yaml:6:9)
  6 |   tags: network
    |         ^`,
  ],
  [
    'operator that does not fit the type',
    '- rule: r\n  desc: d\n  condition: evt.type = open and fd.num contains 3\n  output: o\n  priority: INFO\n',
    `rules.yaml:3:34: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): 'contains' operator not supported for numeric filters
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule condition: (rules.yaml:3:14)
    condition expression 'evt.type = open and ': (rules.yaml:3:34)
  3 |   condition: evt.type = open and fd.num contains 3
    |                                  ^`,
  ],
  [
    'missing required key',
    '- rule: r\n  desc: d\n  condition: evt.type = open\n  priority: INFO\n',
    `rules.yaml:1:3: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Item has no mapping for key 'output'
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
  1 | - rule: r
    |   ^`,
  ],
  [
    'unknown output field',
    '- rule: r\n  desc: d\n  condition: evt.type = open\n  output: "file=%fd.nmae"\n  priority: INFO\n',
    `rules.yaml:4:17: error LOAD_ERR_COMPILE_OUTPUT (Error compiling output): unknown filter: fd.nmae
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
    rule output: (rules.yaml:4:11)
    rule output expression: (rules.yaml:4:17)
  4 |   output: "file=%fd.nmae"
    |                 ^`,
  ],
  [
    'append to a rule that does not exist',
    '- rule: r\n  condition: and proc.name = a\n  override:\n    condition: append\n',
    `rules.yaml:1:3: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Rule uses 'append' or 'override.condition: append' but no rule by that name already exists
    In rules content: (rules.yaml:1:1)
    rule 'r': (rules.yaml:1:3)
  1 | - rule: r
    |   ^`,
  ],
  [
    'engine version too new',
    '- required_engine_version: 0.99.0\n',
    `rules.yaml:1:28: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Rules require engine version 0.99.0, but engine version is 0.63.0
    In rules content: (rules.yaml:1:1)
    required_engine_version: (rules.yaml:1:28)
  1 | - required_engine_version: 0.99.0
    |                            ^`,
  ],
];

for (const [name, yaml, expected] of cases) {
  test(`diagnostics: ${name}`, () => {
    const r = load(yaml);
    assert.is(r.ok, false);
    assert.fixture(errors(r)[0] ?? '(no error)', expected);
  });
}

test('diagnostics: the JSON form has falco -V keys', () => {
  const r = load('- rule: r\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: LOUD\n');
  const j = diagnosticJson(r.diagnostics[0]!, r.sources);
  assert.equal(Object.keys(j), ['code', 'codedesc', 'message', 'context']);
  assert.is(j.code, 'LOAD_ERR_YAML_VALIDATE');
  assert.equal(
    j.context.locations.map((l) => l.item_type),
    ['rules content', 'rule', 'rule priority'],
  );
  assert.equal(j.context.locations[2]!.position, { name: 'rules.yaml', line: 5, column: 13, offset: 73 });
});

test('diagnostics: a failing rule is reported and skipped, the others load', () => {
  const r = load('- rule: bad\n  desc: d\n  condition: evt.type = open and proc.nmae = x\n  output: o\n  priority: INFO\n- rule: good\n  desc: d\n  condition: evt.type = open\n  output: o\n  priority: INFO\n');
  assert.is(r.ok, false);
  assert.equal(
    r.ruleset.rules.map((x) => x.name),
    ['good'],
  );
});

test.run();
