// The CRDs of deploy/base/crds and the engine's own validation (host/resources/manifests.ts)
// agree: the same good and bad manifests go to readManifests and to the CRD schema (ajv, strict
// field validation as kubectl applies by default), and both accept or both refuse each, for the
// reason the table names. The CRDs are structural, name the engine's group, version and kinds,
// and carry the engine's enumerations (priorities, built-in rule sets, the name rules).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { BUILTIN_SETS } from '../../host/engine/builtin.js';
import { PRIORITIES } from '../../host/engine/priority.js';
import { KINDS, MODULE_NAME, RESOURCE_NAME, RESOURCE_VERSION, readManifests } from '../../host/resources/manifests.js';
import { defaultConfig } from '../../host/config/config.js';
import { type Crd, crdValidators, loadCrds, structuralProblems, type JsonSchema } from '../helpers/crd.js';

const crds = loadCrds();
const validators = crdValidators(crds);
const GROUP = defaultConfig({}).resources.apiGroup;

const H = `apiVersion: ${GROUP}/${RESOURCE_VERSION}\n`;
const rules = (items: string, name = 'example') => `${H}kind: EngineAuditRules\nmetadata:\n  name: ${name}\nspec:\n  rules:\n${items}`;
const RULE = (extra = '', drop = '') =>
  ['    - rule:', '        name: Shadow read', '        desc: d', '        condition: open_read and fd.name = /etc/shadow', '        output: o (file=%fd.name)', '        priority: Critical', extra]
    .filter((l) => l !== '' && !(drop && l.trimStart().startsWith(`${drop}:`)))
    .join('\n') + '\n';
const module = (spec: string, name = MODULE_NAME) => `${H}kind: ModuleConfig\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
const namespaced = (items: string) => `${H}kind: NamespacedEngineAuditRules\nmetadata:\n  name: example\n  namespace: team-a\nspec:\n  rules:\n${items}`;
const EXCEPTION = (extra = '') => `    - exception:\n        rule: Shadow read\n        name: backups\n        fields: [proc.name, fd.name]\n${extra}`;

/** [case, manifest, valid] */
const CASES: Array<[string, string, boolean]> = [
  ['a complete rule', rules(RULE()), true],
  ['a rule with every optional field', rules(RULE('        source: K8sAudit\n        enabled: false\n        tags: [a, b]')), true],
  ['a list of strings and integers, a macro', rules('    - list:\n        name: ports\n        items: [http, 8080, 443]\n    - macro:\n        name: m\n        condition: evt.type = open\n'), true],
  ['requiredEngineVersion and the plugin version', `${rules(RULE())}  requiredEngineVersion: 15\n  requiredK8sAuditPluginVersion: 0.1.0\n`, true],
  ['no items at all (rules: [])', `${H}kind: EngineAuditRules\nmetadata:\n  name: empty\nspec:\n  rules: []\n`, true],
  ['an item with macro and rule', rules(`    - macro:\n        name: m\n        condition: evt.type = open\n      rule:\n        name: r\n        desc: d\n        condition: c\n        output: o\n        priority: Notice\n`), false],
  ['an item with none of list, macro, rule', rules('    - {}\n'), false],
  ['a rule without output', rules(RULE('', 'output')), false],
  ['a rule without priority', rules(RULE('', 'priority')), false],
  ['a macro without condition', rules('    - macro:\n        name: m\n'), false],
  ['a list without items', rules('    - list:\n        name: l\n'), false],
  ['priority INFO (upper case)', rules(RULE().replace('Critical', 'INFO')), false],
  ['priority critical (lower case)', rules(RULE().replace('Critical', 'critical')), false],
  ['source k8s_audit (the rules-file spelling)', rules(RULE('        source: k8s_audit')), false],
  ['enabled as a string', rules(RULE('        enabled: "false"')), false],
  ['tags as a string', rules(RULE('        tags: canary')), false],
  ['a desc of null', rules(RULE('', 'desc') + '        desc:\n'), false],
  ['a condition that is a number', rules('    - macro:\n        name: m\n        condition: 42\n'), false],
  ['a list item that is a float', rules('    - list:\n        name: l\n        items: [1.5]\n'), false],
  ['a list item that is a mapping', rules('    - list:\n        name: l\n        items: [{a: b}]\n'), false],
  ['an unknown field in a rule (enable: false)', rules(RULE('        enable: false')), false],
  ['an unknown field in spec', `${rules(RULE())}  override: true\n`, false],
  ['requiredEngineVersion as a string', `${rules(RULE())}  requiredEngineVersion: "15"\n`, false],
  ['rules as a mapping', `${H}kind: EngineAuditRules\nmetadata:\n  name: x\nspec:\n  rules: {}\n`, false],
  ['no rules', `${H}kind: EngineAuditRules\nmetadata:\n  name: x\nspec: {}\n`, false],
  ['no spec', `${H}kind: EngineAuditRules\nmetadata:\n  name: x\n`, false],
  ['a name with upper case letters', rules(RULE(), 'Canary'), false],
  ['ModuleConfig: every setting', module('  enabled: true\n  version: 1\n  settings:\n    debugLogging: true\n    builtInRulesList: [syscall, syscall-incubating, syscall-sandbox, orchestrator-audit]\n'), true],
  ['ModuleConfig: an empty spec', module('  {}\n'), true],
  ['ModuleConfig: no built-in rule set', module('  enabled: false\n  settings:\n    builtInRulesList: []\n'), true],
  ['ModuleConfig: another name', module('  enabled: true\n', 'falco'), false],
  ['ModuleConfig: settings version 2', module('  version: 2\n'), false],
  ["ModuleConfig: upstream's Fstec set", module('  settings:\n    builtInRulesList: [Fstec]\n'), false],
  ['ModuleConfig: enabled as a string', module('  enabled: "true"\n'), false],
  ['ModuleConfig: an unknown setting', module('  settings:\n    debugLoging: true\n'), false],
  ['ModuleConfig: no spec', `${H}kind: ModuleConfig\nmetadata:\n  name: ${MODULE_NAME}\n`, false],
  ['Namespaced: a rule', namespaced(RULE('        source: K8sAudit')), true],
  ['Namespaced: an exception', namespaced(EXCEPTION('        comps: [=, startswith]\n        values: [[backup, /srv/], [tar, 0700]]\n')), true],
  ['Namespaced: an exception without values', namespaced(EXCEPTION()), false],
  ['Namespaced: an exception with a value that is a mapping', namespaced(EXCEPTION('        values: [[{a: b}, x]]\n')), false],
  ['Namespaced: a macro (namespaced resources define rules and exceptions only)', namespaced('    - macro:\n        name: m\n        condition: evt.type = open\n'), false],
  ['Namespaced: a rule and an exception in one item', namespaced(`${RULE()}      exception:\n        rule: r\n        name: n\n        fields: [proc.name]\n        values: [[x]]\n`), false],
];

test('the engine and the CRD schema agree on every manifest of the table', () => {
  const disagree: string[] = [];
  for (const [name, text, valid] of CASES) {
    const read = readManifests(`${name}.yaml`, text, GROUP);
    const engine = read.diagnostics.length === 0 && read.resources.length === 1;
    const doc = parseYaml(text) as { kind: string };
    const errors = validators.get(doc.kind)!(doc);
    const crd = errors.length === 0;
    if (engine !== valid || crd !== valid) {
      disagree.push(
        `${name}: expected ${valid ? 'valid' : 'invalid'}; engine ${engine ? 'valid' : `invalid (${read.diagnostics.map((d) => d.message).join('; ')})`}, CRD ${crd ? 'valid' : `invalid (${errors.map((e) => `${e.instancePath} ${e.message}`).join('; ')})`}`,
      );
    }
  }
  assert.equal(disagree, []);
});

test('the CRDs are structural and name the group, version and kinds the engine reads', () => {
  assert.equal([...crds.keys()].sort(), [...KINDS].sort());
  for (const [kind, crd] of crds) {
    assert.is(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.is(crd.spec.group, GROUP);
    assert.is(crd.metadata.name, `${crd.spec.names.plural}.${GROUP}`);
    assert.is(crd.spec.scope, kind === 'NamespacedEngineAuditRules' ? 'Namespaced' : 'Cluster', kind);
    assert.equal(
      crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
      [[RESOURCE_VERSION, true, true]],
    );
    assert.equal(structuralProblems(crd.spec.versions[0]!.schema.openAPIV3Schema), [], kind);
  }
});

test("the CRDs carry the engine's enumerations and name rules", () => {
  const at = (kind: string, ...path: string[]): JsonSchema => {
    let s = crds.get(kind)!.spec.versions[0]!.schema.openAPIV3Schema;
    for (const p of path) s = (p === '[]' ? s.items : (s.properties as Record<string, JsonSchema>)[p]) as JsonSchema;
    return s;
  };
  assert.equal(at('EngineAuditRules', 'spec', 'rules', '[]', 'rule', 'priority').enum, [...PRIORITIES]);
  assert.equal(at('NamespacedEngineAuditRules', 'spec', 'rules', '[]', 'rule'), at('EngineAuditRules', 'spec', 'rules', '[]', 'rule'));
  assert.equal(at('ModuleConfig', 'spec', 'settings', 'builtInRulesList', '[]').enum, [...BUILTIN_SETS]);
  assert.equal(at('ModuleConfig', 'metadata', 'name').enum, [MODULE_NAME]);
  assert.is(at('EngineAuditRules', 'metadata', 'name').pattern, RESOURCE_NAME.source);
});

test('every kind has the status subresource, the same status schema and the same status printer columns', () => {
  const version = (kind: string) => crds.get(kind)!.spec.versions[0]! as Crd['spec']['versions'][number] & { subresources?: { status?: object }; additionalPrinterColumns?: unknown[] };
  const statusSchema = (kind: string) => (version(kind).schema.openAPIV3Schema.properties as Record<string, JsonSchema>).status;
  for (const kind of KINDS) {
    assert.equal(version(kind).subresources, { status: {} }, kind);
    assert.ok(statusSchema(kind), kind);
    assert.equal(statusSchema(kind), statusSchema('EngineAuditRules'), kind);
    assert.equal(version(kind).additionalPrinterColumns, version('EngineAuditRules').additionalPrinterColumns, kind);
  }
});

test('the structural check finds what the API server refuses', () => {
  assert.equal(structuralProblems({ type: 'object', properties: { a: {} } }), ['.a: no type']);
  assert.equal(structuralProblems({ type: 'object', properties: { a: { type: 'string' } }, oneOf: [{ properties: { a: { type: 'string' } } }] }), [": 'properties' inside anyOf/oneOf/allOf"]);
});

test.run();
