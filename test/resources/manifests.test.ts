// Manifest validation: every bad manifest gets located errors, asserted as the exact rendered
// text (file:line:col, context chain, caret); good manifests become typed resources; an
// EngineAuditRules becomes a rules file whose errors point back into the manifest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderDiagnostic } from '../../host/engine/diagnostics.js';
import { loadRules } from '../../host/engine/index.js';
import { readManifests, type EngineAuditRulesResource, type ModuleConfigResource } from '../../host/resources/manifests.js';
import { remapDiagnostics, toRulesFile } from '../../host/resources/rules-file.js';

const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const rules = (items: string) => `${H}kind: EngineAuditRules\nmetadata:\n  name: custom\nspec:\n  rules:\n${items}`;
const RULE = '    - rule:\n        name: r\n        desc: d\n        condition: evt.type = open\n        output: o\n';

function rendered(text: string): string[] {
  const m = readManifests('res.yaml', text, 'deckhouse.io');
  assert.is(m.resources.length, 0);
  return m.diagnostics.map((d) => renderDiagnostic(d, () => m.src));
}

const V = 'error LOAD_ERR_YAML_VALIDATE (Error validating internal structure of YAML file)';
const P = 'error LOAD_ERR_YAML_PARSE (YAML parse error)';

const CASES: Array<[string, string, string[]]> = [
  [
    'wrong kind',
    `${H}kind: FalcoAuditRules\nmetadata:\n  name: x\nspec:\n  rules: []\n`,
    [
      `res.yaml:2:7: ${V}: kind "FalcoAuditRules" is not a resource of this module (known kinds: ModuleConfig, EngineAuditRules, NamespacedEngineAuditRules)
    In rules content 'FalcoAuditRules/x': (res.yaml:1:1)
    value for 'kind': (res.yaml:2:7)
  2 | kind: FalcoAuditRules
    |       ^`,
    ],
  ],
  [
    'wrong ModuleConfig name',
    `${H}kind: ModuleConfig\nmetadata:\n  name: falco\nspec:\n  enabled: true\n`,
    [
      `res.yaml:4:9: ${V}: a ModuleConfig of this module must be named "runtime-audit-engine", not "falco"
    In rules content 'ModuleConfig/falco': (res.yaml:1:1)
    value for 'metadata.name': (res.yaml:4:9)
  4 |   name: falco
    |         ^`,
    ],
  ],
  [
    'unknown field',
    rules(`${RULE}        priority: Warning\n        enable: false\n`),
    [
      `res.yaml:13:9: ${V}: unknown field 'spec.rules[0].rule.enable' (known fields: name, desc, condition, output, priority, tags, enabled, source)
    In rules content 'EngineAuditRules/custom': (res.yaml:1:1)
    rule 'r': (res.yaml:8:9)
    value for 'spec.rules[0].rule.enable': (res.yaml:13:9)
  13 |         enable: false
     |         ^`,
    ],
  ],
  [
    'bad priority',
    rules(`${RULE}        priority: INFO\n`),
    [
      `res.yaml:12:19: ${V}: 'spec.rules[0].rule.priority' must be one of Emergency, Alert, Critical, Error, Warning, Notice, Informational, Debug, not "INFO" (did you mean Informational?)
    In rules content 'EngineAuditRules/custom': (res.yaml:1:1)
    rule 'r': (res.yaml:8:9)
    value for 'spec.rules[0].rule.priority': (res.yaml:12:19)
  12 |         priority: INFO
     |                   ^`,
    ],
  ],
  [
    'macro and rule in one item',
    rules('    - macro:\n        name: m\n        condition: evt.type = open\n      rule:\n        name: r\n'),
    [
      `res.yaml:7:7: ${V}: 'spec.rules[0]' must have exactly one of macro, list, rule; it has macro and rule
    In rules content 'EngineAuditRules/custom': (res.yaml:1:1)
    value for 'spec.rules[0]': (res.yaml:7:7)
  7 |     - macro:
    |       ^`,
    ],
  ],
  [
    'YAML error',
    rules('    - macro: {name: m, condition: [evt.type = open}\n'),
    [
      `res.yaml:7:51: ${P}: Flow sequence in block collection must be sufficiently indented and end with a ]
    In rules content: (res.yaml:1:1)
    rules content: (res.yaml:7:51)
  7 |     - macro: {name: m, condition: [evt.type = open}
    |                                                   ^`,
      `res.yaml:7:52: ${P}: Flow map in block collection must be sufficiently indented and end with a }
    In rules content: (res.yaml:1:1)
    rules content: (res.yaml:7:52)
  7 |     - macro: {name: m, condition: [evt.type = open}
    |                                                    ^`,
    ],
  ],
  [
    'duplicate key',
    `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  enabled: false\n`,
    [
      `res.yaml:7:3: ${P}: Map keys must be unique
    In rules content: (res.yaml:1:1)
    rules content: (res.yaml:7:3)
  7 |   enabled: false
    |   ^`,
    ],
  ],
  [
    'wrong apiVersion',
    `apiVersion: deckhouse.io/v1\nkind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n`,
    [
      `res.yaml:1:13: ${V}: apiVersion must be "deckhouse.io/v1alpha1", not "deckhouse.io/v1"
    In rules content 'ModuleConfig/runtime-audit-engine': (res.yaml:1:1)
    value for 'apiVersion': (res.yaml:1:13)
  1 | apiVersion: deckhouse.io/v1
    |             ^`,
    ],
  ],
  [
    'resource name',
    `${H}kind: EngineAuditRules\nmetadata:\n  name: My_Rules\nspec:\n  rules: []\n`,
    [
      `res.yaml:4:9: ${V}: 'metadata.name' "My_Rules" must be a lower-case DNS-1123 name (a-z, 0-9, "-" and ".", starting and ending with a letter or digit)
    In rules content 'EngineAuditRules/My_Rules': (res.yaml:1:1)
    value for 'metadata.name': (res.yaml:4:9)
  4 |   name: My_Rules
    |         ^`,
    ],
  ],
  [
    'a string for a boolean',
    `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: "yes"\n`,
    [
      `res.yaml:6:12: ${V}: 'spec.enabled' must be a boolean (true or false), not a string ("yes")
    In rules content 'ModuleConfig/runtime-audit-engine': (res.yaml:1:1)
    value for 'spec.enabled': (res.yaml:6:12)
  6 |   enabled: "yes"
    |            ^`,
    ],
  ],
  [
    'unknown built-in rule set',
    `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  version: 1\n  settings:\n    builtInRulesList: [syscall, Fstec]\n`,
    [
      `res.yaml:9:33: ${V}: 'spec.settings.builtInRulesList[1]' must be one of syscall, syscall-incubating, syscall-sandbox, orchestrator-audit, not "Fstec"
    In rules content 'ModuleConfig/runtime-audit-engine': (res.yaml:1:1)
    value for 'spec.settings.builtInRulesList[1]': (res.yaml:9:33)
  9 |     builtInRulesList: [syscall, Fstec]
    |                                 ^`,
    ],
  ],
  [
    'settings version',
    `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  version: 2\n`,
    [
      `res.yaml:6:12: ${V}: 'spec.version' must be 1, not 2
    In rules content 'ModuleConfig/runtime-audit-engine': (res.yaml:1:1)
    value for 'spec.version': (res.yaml:6:12)
  6 |   version: 2
    |            ^`,
    ],
  ],
  [
    'missing spec',
    `${H}kind: EngineAuditRules\nmetadata:\n  name: x\n`,
    [
      `res.yaml:1:1: ${V}: missing required field 'spec'
    In rules content 'EngineAuditRules/x': (res.yaml:1:1)
  1 | apiVersion: deckhouse.io/v1alpha1
    | ^`,
    ],
  ],
  [
    'missing rule fields',
    rules('    - rule:\n        name: r\n        condition: evt.type = open\n'),
    [
      `res.yaml:8:9: ${V}: missing required fields 'spec.rules[0].rule.desc', 'spec.rules[0].rule.output', 'spec.rules[0].rule.priority'
    In rules content 'EngineAuditRules/custom': (res.yaml:1:1)
    rule 'r': (res.yaml:8:9)
    value for 'spec.rules[0].rule': (res.yaml:8:9)
  8 |         name: r
    |         ^`,
    ],
  ],
  [
    'not a mapping',
    '- a\n- b\n',
    [
      `res.yaml:1:1: ${V}: a resource must be a mapping with apiVersion, kind, metadata and spec
    In rules content: (res.yaml:1:1)
  1 | - a
    | ^`,
    ],
  ],
];

for (const [name, text, expected] of CASES) {
  test(`manifests: ${name}`, () => {
    assert.equal(rendered(text), expected);
  });
}

test('manifests: every error of a document at once; a bad source, a non-string tag, a list item that is a mapping', () => {
  const out = rendered(rules(`${RULE}        priority: Warning\n        source: k8s\n        tags: [a, {b: c}]\n    - list: {name: l, items: [a, {x: 1}]}\n`));
  assert.equal(
    out.map((l) => l.split('\n')[0]),
    [
      `res.yaml:13:17: ${V}: 'spec.rules[0].rule.source' must be one of Syscall, K8sAudit, not "k8s"`,
      `res.yaml:14:19: ${V}: 'spec.rules[0].rule.tags[1]' must be a string, not a mapping`,
      `res.yaml:15:34: ${V}: 'spec.rules[1].list.items[1]' must be an integer or a string, not a mapping`,
    ],
  );
});

test('manifests: a file of several documents: good ones load, a bad one is rejected alone', () => {
  const text = `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: true\n  version: 1\n  settings:\n    debugLogging: true\n    builtInRulesList: []\n---\n${rules(`${RULE}        priority: Critical\n`)}---\n${H}kind: EngineAuditRules\nmetadata:\n  name: broken\nspec: {}\n---\n`;
  const m = readManifests('multi.yaml', text, 'deckhouse.io');
  assert.equal(
    m.resources.map((r) => `${r.kind}/${r.name}`),
    ['ModuleConfig/runtime-audit-engine', 'EngineAuditRules/custom'],
  );
  const mc = m.resources[0] as ModuleConfigResource;
  assert.equal([mc.enabled, mc.debugLogging, mc.builtInRulesList], [true, true, []]);
  assert.equal(
    m.rejected.map((r) => `${r.kind}/${r.name} ${r.errors.length}`),
    ['EngineAuditRules/broken 1'],
  );
  assert.is(m.rejected[0]!.ctx[0]!.position.line, 25);
});

test('manifests: the api group is configurable', () => {
  const text = `apiVersion: example.com/v1alpha1\nkind: EngineAuditRules\nmetadata:\n  name: x\nspec:\n  rules: []\n`;
  assert.is(readManifests('a.yaml', text, 'example.com').resources.length, 1);
  assert.is(readManifests('a.yaml', text, 'deckhouse.io').resources.length, 0);
});

const GOOD = rules(`    - list:
        name: bins
        items: [ash, 0700, 12]
    - macro:
        name: opens_bins
        condition: evt.type = openat and proc.name in (bins)
    - rule:
        name: Bin opened
        desc: a bin opened a file
        condition: >
          opens_bins
          and fd.name startswith "/srv/\\"q\\""
        output: opened %fd.name by %proc.name
        priority: Notice
        tags: [custom, files]
        enabled: false
    - rule:
        name: Secret read
        desc: d
        condition: ka.verb = get and ka.target.resource = secrets
        output: read %ka.target.name
        priority: Informational
        source: K8sAudit
`);

test('manifests: an EngineAuditRules as a rules file loads with the same values', () => {
  const m = readManifests('good.yaml', GOOD, 'deckhouse.io');
  assert.equal(m.diagnostics, []);
  const t = toRulesFile(m.resources[0] as EngineAuditRulesResource);
  const r = loadRules([t.file], { suggestedOutput: false });
  assert.ok(r.ok, r.diagnostics.map((d) => d.message).join('\n'));
  const [a, b] = r.ruleset.rules;
  assert.equal([a!.name, a!.priority, a!.enabled, a!.tags, a!.source], ['Bin opened', 'Notice', false, ['custom', 'files'], 'syscall']);
  assert.equal([b!.name, b!.priority, b!.enabled, b!.source], ['Secret read', 'Informational', true, 'k8s_audit']);
  assert.match(t.file.text, 'items: ["ash", "0700", "12"]');
});

test('manifests: an engine error inside a manifest condition is reported at the manifest line and column', () => {
  const bad = GOOD.replace('and fd.name startswith', 'and fd.nmae startswith');
  const m = readManifests('good.yaml', bad, 'deckhouse.io');
  const t = toRulesFile(m.resources[0] as EngineAuditRulesResource);
  const r = loadRules([t.file]);
  assert.not.ok(r.ok);
  const errs = remapDiagnostics(
    r.diagnostics.filter((d) => d.severity === 'error'),
    [t],
  ).map((d) => renderDiagnostic(d, () => m.src));
  assert.equal(errs, [
    `good.yaml:18:15: error LOAD_ERR_COMPILE_CONDITION (Error compiling condition): filter_check called with nonexistent field fd.nmae
    In rules content 'EngineAuditRules/custom': (good.yaml:1:1)
    rule 'Bin opened': (good.yaml:14:9)
    rule condition: (good.yaml:16:20)
    condition expression 'opens_bins and fd.nm': (good.yaml:18:15)
  18 |           and fd.nmae startswith "/srv/\\"q\\""
     |               ^`,
  ]);
});

test('manifests: an error in a macro of a manifest is located in that macro', () => {
  const bad = GOOD.replace('proc.name in (bins)', 'proc.name in (bins');
  const m = readManifests('good.yaml', bad, 'deckhouse.io');
  const t = toRulesFile(m.resources[0] as EngineAuditRulesResource);
  const r = loadRules([t.file]);
  const first = remapDiagnostics(
    r.diagnostics.filter((d) => d.severity === 'error'),
    [t],
  )[0]!;
  const loc = first.locations.at(-1)!.position;
  assert.equal([loc.name, loc.line], ['good.yaml', 12]);
  assert.ok(loc.column > 20, String(loc.column));
});

test('manifests: requiredEngineVersion is checked by the engine, located at the field', () => {
  const text = (v: number) => `${H}kind: EngineAuditRules\nmetadata:\n  name: x\nspec:\n  requiredEngineVersion: ${v}\n  rules: []\n`;
  const ok = readManifests('a.yaml', text(15), 'deckhouse.io');
  assert.ok(loadRules([toRulesFile(ok.resources[0] as EngineAuditRulesResource).file]).ok);
  const m = readManifests('a.yaml', text(999), 'deckhouse.io');
  const t = toRulesFile(m.resources[0] as EngineAuditRulesResource);
  const r = loadRules([t.file]);
  assert.equal(
    remapDiagnostics(r.diagnostics, [t]).map((d) => renderDiagnostic(d, () => m.src).split('\n')[0]),
    ['a.yaml:6:26: error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Rules require engine version 0.999.0, but engine version is 0.63.0'],
  );
});

test.run();
