// `rae describe` and `rae validate --describe`: the JSON of Falco's describe_rule for the four
// corpus rule files as golden files (test/fixtures/describe/, regenerated with UPDATE_GOLDEN=1
// and reviewed in the diff), and the compiled conditions of falcosecurity/falco
// unit_tests/engine/test_rule_loader.cpp (each case named after its upstream test, expected
// strings copied from its get_compiled_rule_condition / describe_rule assertions).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeLoad } from '../../host/engine/describe.js';
import { loadRules } from '../../host/engine/index.js';
import { CORPUS_RULE_FILES, corpusPath } from '../../support/corpus.js';
import { EXCEPTION_RULE_BASE } from '../engine/helpers.js';
import { tempDir } from '../helpers/temp-dir.js';

function rae(args: string[]) {
  return spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8' });
}

const GOLDEN_DIR = 'test/fixtures/describe';

for (const f of CORPUS_RULE_FILES) {
  test(`rae describe ${f} matches its golden file`, () => {
    const r = rae(['describe', '-r', corpusPath(f)]);
    assert.is(r.status, 0, r.stderr);
    const golden = join(GOLDEN_DIR, f.replace(/\.yaml$/, '.json'));
    if (process.env.UPDATE_GOLDEN === '1') {
      mkdirSync(GOLDEN_DIR, { recursive: true });
      writeFileSync(golden, r.stdout);
    }
    assert.ok(existsSync(golden), `missing ${golden} (run with UPDATE_GOLDEN=1 and review)`);
    assert.fixture(r.stdout, readFileSync(golden, 'utf8'));
    const json = JSON.parse(r.stdout) as { rules: Array<{ info: { enabled: boolean } }>; enabled_rules: number };
    assert.is(json.enabled_rules, json.rules.filter((x) => x.info.enabled).length);
  });
}

const tmp = tempDir('rae-describe-');

test('rae describe RULE: one rule; an unknown rule or a file with errors exits 1; --help', () => {
  const one = rae(['describe', '-r', corpusPath('falco_rules.yaml'), 'Terminal shell in container']);
  assert.is(one.status, 0, one.stderr);
  const rules = (JSON.parse(one.stdout) as { rules: Array<{ info: { name: string }; details: { events: string[] } }> }).rules;
  assert.equal(
    rules.map((r) => r.info.name),
    ['Terminal shell in container'],
  );
  assert.ok(rules[0]!.details.events.includes('execve'), rules[0]!.details.events.join(' '));
  const unknown = rae(['describe', '-r', corpusPath('falco_rules.yaml'), 'no such rule']);
  assert.is(unknown.status, 1);
  assert.match(unknown.stderr, 'Rule "no such rule" is not loaded');
  const bad = join(tmp, 'bad.yaml');
  writeFileSync(bad, '- rule: r\n  desc: d\n  condition: evt.type = open and proc.nmae = x\n  output: o\n  priority: INFO\n');
  const invalid = rae(['describe', '-r', bad]);
  assert.is(invalid.status, 1);
  assert.is(invalid.stdout, '');
  assert.match(invalid.stderr, 'nonexistent field proc.nmae');
  const help = rae(['describe', '--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, 'Usage: rae describe -r FILE');
  assert.match(rae(['--help']).stdout, /\n {2}describe +print loaded rules as Falco describes them/);
});

test('rae run -l RULE --json prints the rule in the same layout as rae describe RULE', () => {
  const file = join(tmp, 'one.yaml');
  writeFileSync(file, '- rule: beta\n  desc: the beta rule\n  condition: evt.type = openat and fd.name = /etc/beta\n  output: opened %fd.name\n  priority: WARNING\n');
  const run = rae(['run', '-o', 'rules.builtIn=[]', '-r', file, '-l', 'beta', '--json']);
  assert.is(run.status, 0, run.stderr);
  const described = rae(['describe', '-r', file, 'beta']);
  assert.equal(JSON.parse(run.stdout), JSON.parse(described.stdout));
  assert.is((JSON.parse(run.stdout) as Described).rules[0]!.details.condition_compiled, '(evt.type = openat and fd.name = /etc/beta)');
});

test('rae validate --describe --json adds falco_describe_results only when every file is valid', () => {
  const ok = rae(['validate', '--json', '--describe', '-r', corpusPath('k8s_audit_rules.yaml')]);
  assert.is(ok.status, 0, ok.stderr);
  const json = JSON.parse(ok.stdout) as { falco_load_results: unknown[]; falco_describe_results: { rules: unknown[] } };
  assert.is(json.falco_load_results.length, 1);
  assert.ok(json.falco_describe_results.rules.length > 0);
  const bad = join(tmp, 'bad2.yaml');
  writeFileSync(bad, '- rule: r\n  desc: d\n  condition: evt.type = open and proc.nmae = x\n  output: o\n  priority: INFO\n');
  const invalid = rae(['validate', '--json', '--describe', '-r', bad]);
  assert.is(invalid.status, 1);
  assert.not.ok('falco_describe_results' in (JSON.parse(invalid.stdout) as object));
});

// ---- test_rule_loader.cpp: compiled conditions as Falco's loader produces them ----

interface Described {
  rules: Array<{ info: { condition: string; output: string; description: string; priority: string }; details: { condition_compiled: string } }>;
}

function describeOne(yaml: string, rule: string): Described['rules'][number] {
  const result = loadRules([{ name: 'rules.yaml', text: yaml }], { suggestedOutput: false });
  assert.ok(result.ok, JSON.stringify(result.diagnostics.map((d) => d.message)));
  const described = describeLoad(result, rule) as unknown as Described | undefined;
  assert.ok(described, `rule ${rule} described`);
  return described.rules[0]!;
}

const compiledCases: Array<[string, string, string, string]> = [
  [
    'list_append',
    `
- list: shell_binaries
  items: [ash, bash, csh, ksh, sh, tcsh, zsh, dash]

- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open and proc.name in (shell_binaries)
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- list: shell_binaries
  items: [pwsh]
  override:
    items: append
`,
    'legit_rule',
    '(evt.type = open and proc.name in (ash, bash, csh, ksh, sh, tcsh, zsh, dash, pwsh))',
  ],
  [
    'condition_append',
    `
- macro: interactive
  condition: >
    ((proc.aname=sshd and proc.name != sshd) or
    proc.name=systemd-logind or proc.name=login)

- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open and interactive
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- macro: interactive
  condition: or proc.name = ssh
  override:
    condition: append
`,
    'legit_rule',
    '(evt.type = open and (((proc.aname = sshd and proc.name != sshd) or proc.name = systemd-logind or proc.name = login) or proc.name = ssh))',
  ],
  [
    'rule_append',
    `
- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- rule: legit_rule
  condition: and proc.name = cat
  append: true
`,
    'legit_rule',
    '(evt.type = open and proc.name = cat)',
  ],
  [
    'macro_override_replace_before_macro_definition',
    `

- macro: open_simple
  condition: or evt.type = openat2
  override:
    condition: replace

- macro: open_simple
  condition: evt.type in (open,openat)

- rule: test_rule
  desc: simple rule
  condition: open_simple
  output: command=%proc.cmdline
  priority: INFO

`,
    'test_rule',
    'evt.type in (open, openat)',
  ],
  [
    'macro_override_append_after_macro_definition',
    `

- macro: open_simple
  condition: evt.type in (open,openat)

- macro: open_simple
  condition: or evt.type = openat2
  override:
    condition: append

- rule: test_rule
  desc: simple rule
  condition: open_simple
  output: command=%proc.cmdline
  priority: INFO

`,
    'test_rule',
    '(evt.type in (open, openat) or evt.type = openat2)',
  ],
  [
    'macro_append_after_macro_definition',
    `

- macro: open_simple
  condition: evt.type in (open,openat)

- macro: open_simple
  condition: or evt.type = openat2
  append: true

- rule: test_rule
  desc: simple rule
  condition: open_simple
  output: command=%proc.cmdline
  priority: INFO

`,
    'test_rule',
    '(evt.type in (open, openat) or evt.type = openat2)',
  ],
  [
    'rule_override_append_after_rule_definition',
    `
- rule: test_rule
  desc: simple rule
  condition: evt.type in (open,openat)
  output: command=%proc.cmdline
  priority: INFO

- rule: test_rule
  condition: and proc.name = cat
  override:
    condition: append
`,
    'test_rule',
    '(evt.type in (open, openat) and proc.name = cat)',
  ],
  [
    'rule_append_after_rule_definition',
    `
- rule: test_rule
  desc: simple rule
  condition: evt.type in (open,openat)
  output: command=%proc.cmdline
  priority: INFO

- rule: test_rule
  condition: and proc.name = cat
  append: true
`,
    'test_rule',
    '(evt.type in (open, openat) and proc.name = cat)',
  ],
  [
    'rewrite_rule',
    `
- rule: test_rule
  desc: test rule description
  condition: evt.type = close
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO
  enabled: false

- rule: test_rule
  desc: redefined rule syntax
  condition: proc.name = cat
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: WARNING
  enabled: true
`,
    'test_rule',
    'proc.name = cat',
  ],
  [
    'exceptions_condition',
    `
- rule: test_rule
  desc: test rule
  condition: proc.cmdline contains curl or proc.cmdline contains wget
  output: command=%proc.cmdline
  priority: INFO
  exceptions:
    - name: test_exception
      fields: [proc.cmdline]
      comps: [contains]
      values:
        - [curl 127.0.0.1]
`,
    'test_rule',
    '((proc.cmdline contains curl or proc.cmdline contains wget) and not proc.cmdline contains "curl 127.0.0.1")',
  ],
];

// test_rule_loader.cpp exceptions_values_* / exceptions_fields_* cases, on s_exception_values_rule_base
const exceptionCases: Array<[string, string, string]> = [
  ['exceptions_values_rhs_field_ambiguous', 'fields: [proc.name]\n      comps: [=]\n      values:\n        - [proc.pname]', '(evt.type = open and not proc.name = proc.pname)'],
  ['exceptions_values_rhs_field_ambiguous_quoted', 'fields: [proc.name]\n      comps: [=]\n      values:\n        - ["proc.pname"]', '(evt.type = open and not proc.name = proc.pname)'],
  ['exceptions_values_rhs_field_ambiguous_space_quoted', 'fields: [proc.name]\n      comps: [=]\n      values:\n        - ["proc.pname "]', '(evt.type = open and not proc.name = "proc.pname ")'],
  ['exceptions_values_transformer_space', 'fields: [proc.name]\n      comps: [=]\n      values:\n        - [toupper( proc.pname)]', '(evt.type = open and not proc.name = "toupper( proc.pname)")'],
  ['exceptions_fields_transformer', 'fields: [tolower(proc.name)]\n      comps: [=]\n      values:\n        - [test]', '(evt.type = open and not tolower(proc.name) = test)'],
  ['exceptions_fields_transformer_quoted', 'fields: ["tolower(proc.name)"]\n      comps: [=]\n      values:\n        - [test]', '(evt.type = open and not tolower(proc.name) = test)'],
];
for (const [name, body, expected] of exceptionCases) {
  compiledCases.push([name, `${EXCEPTION_RULE_BASE}  exceptions:\n    - name: test_exception\n      ${body}\n`, 'test_rule', expected]);
}

for (const [name, yaml, rule, expected] of compiledCases) {
  test(`test_rule_loader ${name}: condition_compiled`, () => {
    assert.is(describeOne(yaml, rule).details.condition_compiled, expected);
  });
}

test('test_rule_loader rule_override_append / rule_override_append_replace: info as written after the overrides', () => {
  const appended = describeOne(
    `
- rule: legit_rule
  desc: legit rule description
  condition: evt.type=open
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- rule: legit_rule
  desc: with append
  condition: and proc.name = cat
  output: proc=%proc.name
  override:
    desc: append
    condition: append
    output: append
`,
    'legit_rule',
  );
  assert.is(appended.info.condition, 'evt.type=open and proc.name = cat');
  assert.is(appended.info.output, 'user=%user.name command=%proc.cmdline file=%fd.name proc=%proc.name');
  assert.is(appended.info.description, 'legit rule description with append');
  const replaced = describeOne(
    `
- rule: legit_rule
  desc: legit rule description
  condition: evt.type = close
  output: user=%user.name command=%proc.cmdline file=%fd.name
  priority: INFO

- rule: legit_rule
  desc: a replaced legit description
  condition: and proc.name = cat
  priority: WARNING
  override:
    desc: replace
    condition: append
    priority: replace
`,
    'legit_rule',
  );
  assert.is(replaced.info.condition, 'evt.type = close and proc.name = cat');
  assert.is(replaced.info.output, 'user=%user.name command=%proc.cmdline file=%fd.name');
  assert.is(replaced.info.description, 'a replaced legit description');
  assert.is(replaced.info.priority, 'Warning');
});

test.run();
