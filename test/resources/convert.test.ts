// The converter: every corpus rules file converted to an EngineAuditRules manifest and loaded
// through the resource path (manifest -> rules file in memory -> engine) gives exactly the rules
// of the original file; the upstream converter's faults (INFO -> Info, enabled: false dropped,
// a crash on required_plugin_versions) are not repeated; what cannot be converted is a located
// error and exit 1.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { renderDiagnostic } from '../../host/engine/diagnostics.js';
import { loadRules, type LoadResult, type RulesFile } from '../../host/engine/index.js';
import { printExpr } from '../../host/engine/printer.js';
import { convertRulesFile, resourceNameFromPath } from '../../host/resources/convert.js';
import { readManifests, type EngineAuditRulesResource } from '../../host/resources/manifests.js';
import { toRulesFile } from '../../host/resources/rules-file.js';
import { corpusPath } from '../../support/corpus.js';
import { tempDir } from '../helpers/temp-dir.js';

const GROUP = 'deckhouse.io';

function corpus(name: string): RulesFile {
  const path = corpusPath(name);
  return { name: path, text: readFileSync(path, 'utf8') };
}

/** Converts a rules file and reads it back as the watched directory would. */
function throughManifest(f: RulesFile): RulesFile {
  const c = convertRulesFile(f.name, f.text, { apiGroup: GROUP });
  assert.ok(c.ok, c.diagnostics.map((d) => renderDiagnostic(d, () => c.src)).join('\n'));
  const read = readManifests(`${f.name}.manifest.yaml`, c.manifest!, GROUP);
  assert.equal(
    read.diagnostics.map((d) => renderDiagnostic(d, () => read.src)),
    [],
  );
  assert.is(read.resources.length, 1);
  return toRulesFile(read.resources[0] as EngineAuditRulesResource).file;
}

/** Everything a loaded rule is made of, with the condition as the canonical print. */
function rulesOf(r: LoadResult) {
  return r.ruleset.rules.map((x) => ({
    name: x.name,
    condition: printExpr(x.expanded),
    output: JSON.stringify(x.output),
    desc: x.desc,
    priority: x.priority,
    enabled: x.enabled,
    tags: x.tags,
    source: x.source,
    evttypes: x.evttypes ? [...x.evttypes].sort() : undefined,
  }));
}

const CASES: Array<[string, string[]]> = [
  ['falco_rules.yaml', []],
  ['falco-incubating_rules.yaml', ['falco_rules.yaml']],
  ['falco-sandbox_rules.yaml', ['falco_rules.yaml']],
  ['k8s_audit_rules.yaml', []],
];

for (const [file, deps] of CASES) {
  test(`convert: ${file} round trip gives the same compiled rules`, () => {
    const originals = [...deps, file].map(corpus);
    const original = loadRules(originals);
    const converted = loadRules(originals.map(throughManifest));
    assert.ok(original.ok);
    assert.ok(
      converted.ok,
      converted.diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => d.message)
        .join('\n'),
    );
    assert.ok(original.ruleset.rules.length > 20);
    assert.equal(converted.ruleset.stats, original.ruleset.stats);
    const a = rulesOf(original);
    const b = rulesOf(converted);
    assert.is(b.length, a.length);
    for (let i = 0; i < a.length; i++) assert.equal(b[i], a[i], `rule ${a[i]!.name}`);
  });
}

test('convert: the sandbox file keeps its disabled rules disabled', () => {
  const c = convertRulesFile('falco-sandbox_rules.yaml', corpus('falco-sandbox_rules.yaml').text, { apiGroup: GROUP });
  const m = parse(c.manifest!) as { spec: { rules: Array<{ rule?: { enabled?: boolean } }> } };
  assert.is(m.spec.rules.filter((r) => r.rule?.enabled === false).length, 12);
});

const EXAMPLE = `- required_engine_version: 15
- required_plugin_versions:
    - name: k8saudit
      version: 0.1.0
- list: shell_binaries
  items: [ash, bash, sh, 1234, 0700]
- macro: spawned_process
  condition: (evt.type in (execve, execveat) and evt.dir=<)
- rule: K8s Secret Created
  desc: Detect any attempt to create a secret.
  condition: (ka.verb=create and ka.target.resource=secrets)
  output: K8s Secret Created (user=%ka.user.name secret=%ka.target.name)
  priority: INFO
  source: k8s_audit
  enabled: false
  tags: [k8s]
- rule: Shell
  desc: d
  condition: spawned_process and proc.name in (shell_binaries)
  output: shell %proc.name
  priority: INFORMATIONAL
`;

test('convert: the documented shape, priorities, enabled: false, list spellings', () => {
  const c = convertRulesFile('/x/rule_example.yaml', EXAMPLE, { apiGroup: GROUP });
  assert.ok(c.ok);
  assert.equal(parse(c.manifest!), {
    apiVersion: 'deckhouse.io/v1alpha1',
    kind: 'EngineAuditRules',
    metadata: { name: 'rule-example' },
    spec: {
      rules: [
        { list: { name: 'shell_binaries', items: ['ash', 'bash', 'sh', 1234, '0700'] } },
        { macro: { name: 'spawned_process', condition: '(evt.type in (execve, execveat) and evt.dir=<)' } },
        {
          rule: {
            name: 'K8s Secret Created',
            condition: '(ka.verb=create and ka.target.resource=secrets)',
            desc: 'Detect any attempt to create a secret.',
            output: 'K8s Secret Created (user=%ka.user.name secret=%ka.target.name)',
            priority: 'Informational',
            enabled: false,
            tags: ['k8s'],
            source: 'K8sAudit',
          },
        },
        { rule: { name: 'Shell', condition: 'spawned_process and proc.name in (shell_binaries)', desc: 'd', output: 'shell %proc.name', priority: 'Informational' } },
      ],
    },
  });
  assert.ok(c.manifest!.startsWith('apiVersion: deckhouse.io/v1alpha1\nkind: EngineAuditRules\nmetadata:\n  name: rule-example\n'));
  assert.equal(
    c.notes.map((n) => `${n.location.position.line}: ${n.message}`),
    ['1: required_engine_version skipped: EngineAuditRules has no such field', '2: required_plugin_versions skipped: EngineAuditRules has no such field'],
  );
});

test('convert: resource names from file names', () => {
  assert.is(resourceNameFromPath('/a/rule_example.yaml'), 'rule-example');
  assert.is(resourceNameFromPath('Weird.File.Name.yaml'), 'weird');
  assert.is(resourceNameFromPath('My Rules_v2.yaml'), 'my-rules-v2');
  assert.is(resourceNameFromPath('falco-sandbox_rules.yaml'), 'falco-sandbox-rules');
  assert.is(resourceNameFromPath('___.yaml'), undefined);
  assert.is(resourceNameFromPath('.yaml'), undefined);
});

/** The rendered first error of a conversion that must fail. */
function firstError(text: string, name = 'in.yaml'): string {
  const c = convertRulesFile(name, text, { apiGroup: GROUP });
  assert.not.ok(c.ok);
  assert.is(c.manifest, undefined);
  return renderDiagnostic(c.diagnostics.find((d) => d.severity === 'error')!, () => c.src);
}

const BAD: Array<[string, string, string]> = [
  ['append', '- list: l\n  items: [a]\n  append: true\n', "in.yaml:1:3: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): list 'l' uses append/override"],
  ['override', '- macro: m\n  condition: a\n  override:\n    condition: append\n', "in.yaml:1:3: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): macro 'm' uses append/override"],
  ['enable-only rule', '- rule: r\n  enabled: false\n', "in.yaml:1:3: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): rule 'r' has no condition, desc, output, priority"],
  [
    'exceptions',
    '- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n  exceptions:\n    - name: e\n      fields: [proc.name]\n',
    "in.yaml:1:3: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): rule 'r' has exceptions",
  ],
  ['other source', '- rule: r\n  desc: d\n  condition: ct.name=x\n  output: o\n  priority: INFO\n  source: aws_cloudtrail\n', "rule 'r' has source 'aws_cloudtrail'"],
  ['bad priority', '- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: LOUD\n', "in.yaml:5:13: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): rule 'r' has an invalid priority 'LOUD'"],
  [
    'unknown key',
    '- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n  enable: false\n',
    "in.yaml:6:3: error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file): Unknown key 'enable' in rule item",
  ],
  ['YAML error', '- rule: [x\n', 'error LOAD_ERR_YAML_PARSE (YAML parse error)'],
  ['a mapping', 'rule: x\n', 'Rules content is not yaml array of objects'],
  ['capture', '- rule: r\n  desc: d\n  condition: evt.type=open\n  output: o\n  priority: INFO\n  capture: true\n', 'uses capture, which EngineAuditRules has no field for'],
];

for (const [name, text, expected] of BAD) {
  test(`convert: cannot convert ${name}`, () => {
    const out = firstError(text);
    assert.ok(out.includes(expected), out);
    assert.match(out, /\n\s+\d+ \| /); // a caret snippet
  });
}

test('convert: a file name that gives no resource name needs --name', () => {
  assert.match(firstError('- macro: m\n  condition: a\n', '___.yaml'), "cannot derive one from the file name '___.yaml'");
  const c = convertRulesFile('___.yaml', '- macro: m\n  condition: a\n', { apiGroup: GROUP, resourceName: 'mine' });
  assert.ok(c.ok);
  assert.match(c.manifest!, 'name: mine');
});

const tmp = tempDir('rae-convert-');
function rae(args: string[], input?: string) {
  return spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8', input });
}

test('convert: rae convert -input and --input print the manifest, notes on stderr', () => {
  const f = join(tmp, 'rule_example.yaml');
  writeFileSync(f, EXAMPLE);
  const a = rae(['convert', '-input', f]);
  const b = rae(['convert', '--input', f]);
  assert.is(a.status, 0, a.stderr);
  assert.is(a.stdout, b.stdout);
  assert.is((parse(a.stdout) as { metadata: { name: string } }).metadata.name, 'rule-example');
  assert.match(a.stderr, `${f}:1:28: note: required_engine_version skipped`);
  assert.match(a.stderr, `${f}:2:3: note: required_plugin_versions skipped`);
  assert.not.match(a.stdout, 'required');
});

test('convert: rae convert exits 1 with a located error and prints nothing on stdout', () => {
  const f = join(tmp, 'bad.yaml');
  writeFileSync(f, '- rule: r\n  enabled: false\n');
  const r = rae(['convert', '-input', f]);
  assert.is(r.status, 1);
  assert.is(r.stdout, '');
  assert.match(r.stderr, `${f}:1:3: error LOAD_ERR_VALIDATE`);
  assert.match(r.stderr, 'convert: 1 error(s); no manifest written');
  assert.not.match(r.stderr, /\n\s+at .*:\d+:\d+\)/);
});

test('convert: missing file, directory, no -input', () => {
  const missing = rae(['convert', '-input', join(tmp, 'nope.yaml')]);
  assert.is(missing.status, 1);
  assert.match(missing.stderr, 'cannot read');
  assert.match(missing.stderr, 'no such file');
  assert.is(rae(['convert', '-input', tmp]).status, 1);
  const none = rae(['convert']);
  assert.is(none.status, 2);
  assert.match(none.stderr, '-input FILE is required');
});

test('convert: --input - reads standard input', () => {
  const r = rae(['convert', '--input', '-', '--name', 'from-stdin'], EXAMPLE);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, 'name: from-stdin');
});

test.run();
