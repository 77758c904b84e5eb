// `rae replay --format audit` of every orchestrator audit sample of the corpus with the upstream
// k8s_audit_rules.yaml. Two layers:
//  1. a hand-derived table (rule, priority, rendered output) for the samples, written by reading
//     the rule conditions and outputs against the sample JSON;
//  2. golden files of the full alert lines (test/golden/k8saudit/*.jsonl), regenerated with
//     UPDATE_GOLDEN=1 and reviewed in the diff.
// Times render in UTC (the test pins TZ) so the text line is the same on every machine.
// Every golden file is checked twice: through the reference interpreter and through the compiled
// WebAssembly evaluator (rae replay's default engine); both must give the identical lines.
process.env.TZ = 'UTC';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { replayAlerts } from '../../host/cli/replay.js';
import { loadRules } from '../../host/engine/index.js';
import { readReplayInput } from '../../host/sources/replay.js';
import { alertJson } from '../../host/output/alert.js';
import { alertFor } from '../../host/output/from-match.js';
import { RuleCompiler } from '../../host/runtime/compiler.js';
import { selectRules } from '../../host/runtime/detection-engine.js';
import { RuleModule } from '../../host/runtime/evaluator.js';
import { corpusPath, K8SAUDIT_SAMPLES } from '../../support/corpus.js';

const SAMPLES = K8SAUDIT_SAMPLES;
const GOLDEN = 'test/golden/k8saudit';
const RULES = corpusPath('k8s_audit_rules.yaml');
const loaded = loadRules([{ name: 'k8s_audit_rules.yaml', text: readFileSync(RULES, 'utf8') }]);
const options = { ruleMatching: 'first' as const, minPriority: 'Debug' as const, hostname: 'test-node' };

function replay(file: string): { lines: string[]; rejected: number } {
  const input = readReplayInput(readFileSync(join(SAMPLES, file), 'utf8'), 'audit');
  return { lines: replayAlerts(loaded.ruleset, input.events, options).lines, rejected: input.rejected.length };
}

const compiler = new RuleCompiler({ timeoutMs: 0 }); // no build deadline to race a busy machine
const compiled = await compiler.compile(selectRules(loaded.ruleset.rules, 'Debug'));
await compiler.close();
const wasm = compiled.ok ? RuleModule.create(compiled.compiled) : undefined;

function replayWasm(file: string): string[] {
  if (!wasm?.ok) throw new Error(`the compiled evaluator is not available: ${JSON.stringify(compiled.ok ? wasm?.error : compiled.errors)}`);
  const input = readReplayInput(readFileSync(join(SAMPLES, file), 'utf8'), 'audit');
  const r = wasm.module.evaluate(input.events, true);
  if (!r.ok) throw new Error(r.error.message);
  return r.matches.map((m) => alertJson(alertFor(m.rule, input.events[m.event]!, options.hostname)));
}

test('replay-audit: the rules load without errors', () => {
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  assert.is(loaded.ruleset.rules.length, 48);
});

// [sample, rule, priority, output text after the time prefix]
const derived: Array<[string, string, string, string]> = [
  ['anonymous_creates_namespace_foo.json', 'Anonymous Request Allowed', 'Warning', 'Request by anonymous user allowed (user=system:anonymous verb=create uri=/api/v1/namespaces reason=))'],
  ['attach_pod.json', 'Attach/Exec Pod', 'Notice', 'Attach/Exec to pod (user=minikube-user pod=nginx-deployment-7998647bdf-phvq7 resource=pods ns=default action=attach command=<NA>)'],
  ['exec_pod.json', 'Attach/Exec Pod', 'Notice', 'Attach/Exec to pod (user=minikube-user pod=nginx-deployment-7998647bdf-phvq7 resource=pods ns=default action=exec command=bash)'],
  ['create_configmap.json', 'K8s ConfigMap Created', 'Informational', 'K8s ConfigMap Created (user=minikube-user configmap=my-config ns=default resource=configmaps resp=201 decision=allow reason=)'],
  ['create_deployment.json', 'K8s Deployment Created', 'Informational', 'K8s Deployment Created (user=minikube-user deployment=nginx-deployment ns=default resource=deployments resp=201 decision=allow reason=)'],
  [
    'create_nginx_pod_hostnetwork.json',
    'Create HostNetwork Pod',
    'Warning',
    'Pod started using host network (user=system:serviceaccount:kube-system:replicaset-controller pod=nginx-deployment-754c877bcd-zh5qx resource=pods ns=default images=(nginx))',
  ],
  [
    'create_pod_kube_system_namespace.json',
    'Pod Created in Kube Namespace',
    'Warning',
    'Pod created in kube namespace (user=system:serviceaccount:kube-system:replicaset-controller pod=nginx-deployment-7998647bdf-7q2sp resource=pods ns=kube-system images=(nginx))',
  ],
  ['create_serviceaccount_kube_public_namespace.json', 'Service Account Created in Kube Namespace', 'Warning', 'Service account created in kube namespace (user=minikube-user serviceaccount=myacct resource=serviceaccounts ns=kube-public)'],
  ['delete_cluster_role_kube_aggregator.json', 'System ClusterRole Modified/Deleted', 'Warning', 'System ClusterRole/Role modified or deleted (user=minikube-user role=system:kube-aggregator resource=clusterroles ns=<NA> action=delete)'],
  [
    'modify_cluster_role_node_problem_detector.json',
    'System ClusterRole Modified/Deleted',
    'Warning',
    'System ClusterRole/Role modified or deleted (user=minikube-user role=system:node-problem-detector resource=clusterroles ns=<NA> action=patch)',
  ],
  ['delete_namespace_foo.json', 'K8s Namespace Deleted', 'Informational', 'K8s Namespace Deleted (user=minikube-user namespace=foo resource=namespaces resp=200 decision=allow reason=)'],
  ['minikube_creates_namespace_foo.json', 'Create Disallowed Namespace', 'Warning', 'Disallowed namespace created (user=minikube-user ns=foo resource=namespaces)'],
  ['some-user_creates_namespace_foo.json', 'Disallowed K8s User', 'Warning', 'K8s Operation performed by user not in allowed list of users (user=some-user target=foo/namespaces verb=create uri=/api/v1/namespaces resp=201)'],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'Disallowed K8s User', 'Warning', 'K8s Operation performed by user not in allowed list of users (user=test target=test/pods verb=get uri=/api resp=200)'],
  ['delete_secret.json', 'K8s Secret Deleted', 'Informational', 'K8s Secret Deleted (user=minikube-user secret=example-secret ns=default resource=secrets resp=200 decision=allow reason=)'],
];

for (const [file, rule, priority, output] of derived) {
  test(`replay-audit (derived): ${file} -> ${rule}`, () => {
    const { lines } = replay(file);
    assert.is(lines.length, 1);
    const alert = JSON.parse(lines[0]!) as { rule: string; priority: string; output: string; source: string; hostname: string };
    assert.is(alert.rule, rule);
    assert.is(alert.priority, priority);
    assert.is(alert.source, 'k8s_audit');
    assert.is(alert.hostname, 'test-node');
    assert.is(alert.output.replace(/^\d\d:\d\d:\d\d\.\d{9}: \w+ /, ''), output);
  });
}

test('replay-audit (derived): events no rule matches produce no alert', () => {
  for (const f of ['create_nginx_pod_unprivileged.json', 'create_nginx_pod_nohostnetwork.json', 'create_nginx_pod_unsensitive_mount.json', 'create_kube_system_secret.json', 'create_service_account_token_secret.json']) {
    assert.equal(replay(f).lines, [], f);
  }
});

test('replay-audit (derived): six configmaps with credentials give six alerts', () => {
  const { lines } = replay('create_configmap_sensitive_values.json');
  assert.is(lines.length, 6);
  for (const l of lines) assert.is(JSON.parse(l).rule, 'Create/Modify Configmap With Private Credentials');
});

test('replay-audit: a document that is not an audit event is rejected, not evaluated', () => {
  assert.equal(replay('fal_01_003.json'), { lines: [], rejected: 1 });
});

const samples = readdirSync(SAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();
for (const file of samples) {
  test(`replay-audit (golden): ${file}`, () => {
    const got = replay(file).lines.join('\n') + '\n';
    const golden = join(GOLDEN, basename(file, '.json') + '.jsonl');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden, got);
    assert.ok(existsSync(golden), `missing golden file ${golden} (run with UPDATE_GOLDEN=1 and review)`);
    assert.fixture(got, readFileSync(golden, 'utf8'));
  });
  test(`replay-audit (golden, wasm): ${file}`, () => {
    const golden = join(GOLDEN, basename(file, '.json') + '.jsonl');
    assert.fixture(replayWasm(file).join('\n') + '\n', readFileSync(golden, 'utf8'));
  });
}

for (const engine of ['wasm', 'interpreter']) {
  test(`replay-audit: the rae replay command (--engine ${engine}) prints the same lines and a summary`, () => {
    const r = spawnSync(process.execPath, ['bin/rae.js', 'replay', '-r', RULES, '--format', 'audit', '--engine', engine, '--hostname', 'test-node', '--input', join(SAMPLES, 'exec_pod.json')], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC' },
    });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, readFileSync(join(GOLDEN, 'exec_pod.jsonl'), 'utf8'));
    assert.match(r.stderr, 'replay: 1 events, 0 rejected, 1 alerts (Attach/Exec Pod: 1)');
  });
}

test('replay-audit: an unknown --engine is a usage error', () => {
  const r = spawnSync(process.execPath, ['bin/rae.js', 'replay', '-r', RULES, '--format', 'audit', '--engine', 'jit', '--input', join(SAMPLES, 'exec_pod.json')], { encoding: 'utf8' });
  assert.is(r.status, 2);
  assert.match(r.stderr, "--engine must be wasm or interpreter, not 'jit'");
});

test.run();
