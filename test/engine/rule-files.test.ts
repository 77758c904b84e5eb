// Rule-file behaviour that must match Falco's loader, one case per departure found against the
// upstream tests: inputs from falcosecurity/falco unit_tests/engine/test_rule_loader.cpp and
// falcosecurity/testing tests/data/rules/*.go (named on each case), expected values from them
// and from falco userspace/engine/rule_loader_{reader,collector,compiler}.cpp.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadResult } from '../../host/engine/index.js';
import { printExpr } from '../../host/engine/printer.js';
import { EXCEPTION_RULE_BASE, load } from './helpers.js';

const messages = (r: LoadResult, severity: 'error' | 'warning') => r.diagnostics.filter((d) => d.severity === severity).map((d) => `${d.code}: ${d.message}`);
const compiled = (r: LoadResult, name: string) => {
  const rule = r.ruleset.rules.find((x) => x.name === name);
  assert.ok(rule, `rule ${name} loaded`);
  return printExpr(rule.expanded);
};

const WARNING_APPEND = "LOAD_DEPRECATED_ITEM: 'append' key is deprecated. Add an 'append' entry (e.g. 'condition: append') under 'override' instead.";

test('testing ExceptionsAppendItemFieldsValuesLenMismatch: an appended value tuple shorter than the fields fails the rule (no crash)', () => {
  const r = load(`
- rule: My Rule
  desc: Some desc
  condition: evt.type=open and proc.name=cat
  output: Some output
  exceptions:
    - name: ex1
      fields: [proc.name, fd.filename]
  priority: error

- rule: My Rule
  exceptions:
    - name: ex1
      values:
        - [nginx]
  append: true
`);
  assert.is(r.ok, false);
  assert.equal(messages(r, 'error'), ['LOAD_ERR_VALIDATE: Fields and values lists must have equal length']);
  assert.is(r.ruleset.rules.length, 0);
});

test('an appended plain value for a list-form exception, and a tuple for a string-form one, fail as in build_rule_exception_infos', () => {
  const listForm = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: e
      fields: [proc.name, fd.name]
- rule: test_rule
  exceptions:
    - name: e
      values: [nginx]
  override:
    exceptions: append
`);
  assert.equal(messages(listForm, 'error'), ['LOAD_ERR_VALIDATE: Fields and values lists must have equal length']);
  const stringForm = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: e
      fields: proc.name
- rule: test_rule
  exceptions:
    - name: e
      values: [[a, b]]
  override:
    exceptions: append
`);
  assert.equal(messages(stringForm, 'error'), ['LOAD_ERR_VALIDATE: Expected values array to contain a list of strings']);
});

test('testing ExceptionsItemUnknownFields: an exception field the source does not have is an error', () => {
  const r = load(`
- rule: My Rule
  desc: Some desc
  condition: evt.type=open and proc.name=cat
  output: Some output
  exceptions:
    - name: ex1
      fields: [not.exist]
  priority: error
`);
  assert.equal(messages(r, 'error'), ["LOAD_ERR_VALIDATE: 'not.exist' is not a supported filter field"]);
});

test('test_rule_loader exceptions_fields_transformer: a transformer over a known field is a valid exception field', () => {
  const r = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: test_exception
      fields: [tolower(proc.name)]
      comps: [=]
      values:
        - [test]
`);
  assert.equal(messages(r, 'error'), []);
  assert.is(compiled(r, 'test_rule'), '(evt.type = open and not tolower(proc.name) = test)');
});

// libsinsp's as_string prints the value bare (escape_str quotes only on blanks, quotes, = and \).
test('a regex exception value with a comma stays one value', () => {
  const listForm = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: test_exception
      fields: [proc.name]
      comps: [regex]
      values:
        - ["^a{1,3}$"]
`);
  assert.equal(messages(listForm, 'error'), []);
  assert.is(compiled(listForm, 'test_rule'), '(evt.type = open and not proc.name regex ^a{1,3}$)');
  const modifier = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: test_exception
      fields: proc.name
      comps: regex oneof
      values: ["^a{1,3}$", b]
`);
  assert.equal(messages(modifier, 'error'), []);
  assert.is(compiled(modifier, 'test_rule'), '(evt.type = open and not proc.name regex oneof (^a{1,3}$, b))');
});

test('comps with surrounding blanks are accepted', () => {
  const r = load(`${EXCEPTION_RULE_BASE}  exceptions:
    - name: test_exception
      fields: [proc.name, fd.name]
      comps: [" = ", "startswith "]
      values:
        - [cat, /etc]
- rule: test_rule2
  desc: test rule
  condition: evt.type = open
  output: command=%proc.cmdline
  priority: INFO
  exceptions:
    - name: test_exception
      fields: proc.name
      comps: " in "
      values: [cat]
`);
  assert.equal(messages(r, 'error'), []);
  assert.is(compiled(r, 'test_rule'), '(evt.type = open and not (proc.name = cat and fd.name startswith /etc))');
  assert.is(compiled(r, 'test_rule2'), '(evt.type = open and not proc.name in (cat))');
});

test('test_rule_loader rule_append, with an empty source: on the appending item', () => {
  const r = load(`
- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- rule: legit_rule
  condition: and proc.name = cat
  source:
  append: true
`);
  assert.equal(messages(r, 'error'), []);
  assert.equal(messages(r, 'warning'), [WARNING_APPEND]);
  assert.is(compiled(r, 'legit_rule'), '(evt.type = open and proc.name = cat)');
});

test('an appending item naming a different non-empty source is still refused', () => {
  const r = load(`
- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open
  output: o
  priority: INFO
- rule: legit_rule
  condition: and proc.name = cat
  source: k8s_audit
  override:
    condition: append
`);
  assert.equal(messages(r, 'error'), ['LOAD_ERR_VALIDATE: Rule has been re-defined with a different source']);
});

test('test_rule_loader rule_incorrect_append_override: the deprecated-append warning comes with the error', () => {
  const r = load(`
- rule: failing_rule
  desc: legit rule description
  condition: evt.type = close
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- rule: failing_rule
  desc: an appended incorrect field
  condition: and proc.name = cat
  append: true
  override:
    desc: replace
    condition: append
`);
  assert.equal(messages(r, 'error'), ["LOAD_ERR_YAML_VALIDATE: Keys 'override' and 'append: true' cannot be used together. Add an 'append' entry (e.g. 'condition: append') under 'override' instead."]);
  assert.equal(messages(r, 'warning'), [WARNING_APPEND]);
});

test('a deprecated field in a rule output warns (rule_loader_compiler.cpp check_deprecated_fields_in_output)', () => {
  const r = load(`
- rule: test_rule
  desc: test rule
  condition: evt.type = open
  output: command=%proc.cmdline dir=%evt.dir
  priority: INFO
`);
  assert.equal(messages(r, 'error'), []);
  assert.equal(messages(r, 'warning'), ["LOAD_DEPRECATED_ITEM: usage of deprecated field 'evt.dir' has been detected in the rule output"]);
  assert.is(r.diagnostics[0]!.locations.at(-1)!.itemType, 'rule output');
});

const verdicts = (r: LoadResult) => r.files.map((f) => ({ name: f.name, successful: f.successful, errors: f.errors.map((d) => d.message), warnings: f.warnings.map((d) => d.code) }));

// validate_rules_files.cpp loads every file in turn into one engine (falco_engine::load_rules:
// read the file into the persistent collector, then compile everything collected so far).
test('several files: a file after an invalid one is read and judged on its own', () => {
  const r = loadRules([
    { name: 'a.yaml', text: '- rule: [\n' },
    { name: 'b.yaml', text: '- rule: x\n  desc: d\n  condition: evt.type=open and proc.nah=1\n  output: o\n  priority: INFO\n' },
    { name: 'c.yaml', text: '- rule: y\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n' },
  ]);
  assert.equal(
    verdicts(r).map((v) => [v.name, v.successful, v.errors.length]),
    [
      ['a.yaml', false, 1],
      ['b.yaml', false, 1],
      ['c.yaml', true, 0],
    ],
  );
  assert.equal(verdicts(r)[1]!.errors, ['filter_check called with nonexistent field proc.nah']);
});

test("several files: an error brought by an append is the appending file's", () => {
  const r = loadRules([
    { name: 'base.yaml', text: '- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n' },
    { name: 'local.yaml', text: '- rule: r\n  condition: and proc.nope = a\n  override:\n    condition: append\n' },
  ]);
  assert.equal(verdicts(r), [
    { name: 'base.yaml', successful: true, errors: [], warnings: [] },
    { name: 'local.yaml', successful: false, errors: ['filter_check called with nonexistent field proc.nope'], warnings: [] },
  ]);
});

test('several files: LOAD_UNUSED_MACRO of a file that loaded cleanly survives an error in a later file', () => {
  const r = loadRules([
    { name: 'a.yaml', text: '- macro: unused_a\n  condition: proc.name = a\n- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n' },
    { name: 'b.yaml', text: '- macro: unused_b\n  condition: proc.name = b\n- rule: s\n  desc: d\n  condition: evt.type=open and proc.nope=1\n  output: o\n  priority: INFO\n' },
  ]);
  assert.equal(verdicts(r), [
    { name: 'a.yaml', successful: true, errors: [], warnings: ['LOAD_UNUSED_MACRO'] },
    { name: 'b.yaml', successful: false, errors: ['filter_check called with nonexistent field proc.nope'], warnings: [] },
  ]);
});

test.run();
