// NamespacedEngineAuditRules through the controller and the real engine: a rule of namespace
// team-a alerts on team-a's pods only (not team-b's, not the host's), even with an `or` in its
// condition; its exceptions silence a rule of the cluster in team-a only (syscall and audit rules),
// even one named like an exception the rule already has; and what could weaken detection outside
// the namespace is refused while the cluster's rules keep firing everywhere: a rule that would
// replace another, a macro or list (not in the schema). Errors in a namespaced condition are
// located in the manifest as for any resource.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RulesFile } from '../../host/engine/index.js';
import { ResourceController } from '../../host/resources/controller.js';
import type { ManifestFile } from '../../host/resources/watch.js';
import { DetectionEngine } from '../../host/runtime/detection-engine.js';
import { readReplayInput } from '../../host/sources/replay.js';

const H = 'apiVersion: deckhouse.io/v1alpha1\n';
const BASE: RulesFile = {
  name: 'rules/syscall/base.yaml',
  text: `- macro: opened
  condition: evt.type in (open, openat)
- rule: Shadow read
  desc: d
  condition: opened and fd.name = /etc/shadow
  output: shadow %proc.name
  priority: WARNING
  exceptions:
    - name: known
      fields: [proc.name]
      values: [[sshd]]
- rule: Secret read
  desc: d
  condition: ka.verb = get and ka.target.resource = secrets
  output: secret %ka.user.name
  priority: WARNING
  source: k8s_audit
`,
};

const namespaced = (ns: string, name: string, items: string) => `${H}kind: NamespacedEngineAuditRules\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  rules:\n${items}`;
const TEAM_A = namespaced(
  'team-a',
  'canary',
  `    - rule:
        name: Canary
        desc: d
        condition: opened and fd.name = /srv/canary or fd.name = /srv/canary2
        output: canary %fd.name
        priority: Warning
    - exception:
        rule: Shadow read
        name: backups
        fields: [proc.name]
        values: [[backup]]
    - exception:
        rule: Shadow read
        name: known
        fields: [proc.name]
        values: [[cat]]
    - exception:
        rule: Secret read
        name: ci
        source: K8sAudit
        fields: [ka.user.name]
        values: [[ci-bot]]
`,
);

function setup() {
  const alerts: string[] = [];
  const logs: string[] = [];
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: (a) => alerts.push(a.rule), engine: 'interpreter' });
  const controller = new ResourceController({
    apiGroup: 'deckhouse.io',
    engine,
    baseFiles: () => [BASE],
    defaultBuiltIn: ['syscall'],
    onModuleState: () => undefined,
    reporter: { log: (m) => logs.push(m), alert: () => undefined, hostname: 'h' },
  });
  const evaluate = (line: object): string[] => {
    alerts.length = 0;
    engine.evaluate(readReplayInput(JSON.stringify(line), 'fields').events);
    return [...alerts];
  };
  /** The rules an open of `path` by `proc` fires in namespace `ns` (undefined: on the host). */
  const open = (path: string, ns?: string, proc = 'cat') => evaluate({ fields: { 'evt.type': 'openat', 'fd.name': path, 'proc.name': proc, ...(ns ? { 'k8s.ns.name': ns } : {}) } });
  /** The rules a read of a Secret by `user` in namespace `ns` fires. */
  const secret = (ns: string, user: string) => evaluate({ source: 'k8s_audit', fields: { 'ka.verb': 'get', 'ka.target.resource': 'secrets', 'ka.target.namespace': ns, 'ka.user.name': user } });
  return { engine, controller, logs, open, secret };
}

const f = (path: string, text: string): ManifestFile => ({ path, text });

test('namespaced: a rule sees only its namespace; its exceptions silence a cluster rule there only', async () => {
  const s = setup();
  const r = await s.controller.apply([f('res/team-a.yaml', TEAM_A)]);
  assert.equal(r.rejections, [], s.logs.join('\n'));
  assert.equal(s.controller.activeRules, ['team-a/canary']);

  assert.equal(s.open('/srv/canary', 'team-a'), ['team-a/Canary']);
  assert.equal(s.open('/srv/canary', 'team-b'), []);
  assert.equal(s.open('/srv/canary'), [], 'not on the host');
  assert.equal(s.open('/srv/canary2', 'team-b'), [], "the condition's `or` stays inside the namespace");

  // Shadow read: the exceptions of team-a apply in team-a only.
  assert.equal(s.open('/etc/shadow', 'team-a', 'backup'), []);
  assert.equal(s.open('/etc/shadow', 'team-b', 'backup'), ['Shadow read']);
  assert.equal(s.open('/etc/shadow', undefined, 'backup'), ['Shadow read']);
  // team-a's exception named like the rule's own `known` is its own: cat is allowed in team-a only.
  assert.equal(s.open('/etc/shadow', 'team-a', 'cat'), []);
  assert.equal(s.open('/etc/shadow', 'team-b', 'cat'), ['Shadow read']);
  assert.equal(s.open('/etc/shadow', 'team-b', 'sshd'), [], "the rule's own exception is untouched");
  assert.equal(s.open('/etc/shadow', 'team-a', 'vim'), ['Shadow read']);

  // An audit rule: the exception keys on the target object's namespace.
  assert.equal(s.secret('team-a', 'ci-bot'), []);
  assert.equal(s.secret('team-b', 'ci-bot'), ['Secret read']);
  assert.equal(s.secret('team-a', 'alice'), ['Secret read']);
});

test('namespaced: what would weaken detection elsewhere is refused; the cluster rules keep firing everywhere', async () => {
  const s = setup();
  const trap = `${H}kind: EngineAuditRules\nmetadata:\n  name: trap\nspec:\n  rules:\n    - rule:\n        name: team-c/Trap\n        desc: d\n        condition: opened and fd.name = /srv/trap\n        output: trap\n        priority: Warning\n`;
  // A rule whose qualified name is a rule of the cluster would replace it.
  const replace = namespaced('team-c', 'replace', '    - rule:\n        name: Trap\n        desc: d\n        condition: opened and fd.name = /nothing\n        output: o\n        priority: Debug\n');
  // A macro would redefine the cluster's (opened is in every rule above).
  const macro = namespaced('team-c', 'macro', '    - macro:\n        name: opened\n        condition: evt.type = never\n');
  const r = await s.controller.apply([f('res/trap.yaml', trap), f('res/replace.yaml', replace), f('res/macro.yaml', macro)]);
  assert.equal(
    r.rejections.map((x) => `${x.kind}/${x.name}: ${x.errors.map((e) => e.message).join('; ')}`),
    [
      "NamespacedEngineAuditRules/team-c/macro: 'spec.rules[0]' must have exactly one of rule, exception; it has none",
      "NamespacedEngineAuditRules/team-c/replace: rule 'team-c/Trap' is already defined elsewhere; a namespaced rule may not replace another rule",
    ],
  );
  assert.match(s.logs.join('\n'), 'res/replace.yaml:9:15: error LOAD_ERR_VALIDATE');
  for (const ns of ['team-c', 'team-d', undefined]) {
    assert.equal(s.open('/srv/trap', ns), ['team-c/Trap'], String(ns));
    assert.equal(s.open('/etc/shadow', ns, 'vim'), ['Shadow read'], String(ns));
  }
});

test('namespaced: an error in a scoped condition is located in the manifest', async () => {
  const s = setup();
  const text = namespaced('team-a', 'typo', '    - rule:\n        name: Typo\n        desc: d\n        condition: opened and fd.nmae = /x\n        output: o\n        priority: Debug\n');
  const r = await s.controller.apply([f('res/typo.yaml', text)]);
  assert.is(r.rejections.length, 1);
  const line = text.split('\n').findIndex((l) => l.includes('fd.nmae')) + 1;
  const col = text.split('\n')[line - 1]!.indexOf('fd.nmae') + 1;
  assert.match(s.logs.join('\n'), `res/typo.yaml:${line}:${col}: error LOAD_ERR_COMPILE_CONDITION`);
  assert.match(s.logs.join('\n'), `  ${line} |         condition: opened and fd.nmae = /x`);
});

test.run();
