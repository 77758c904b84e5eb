// ka.* / jevt.* extraction against every event of the corpus audit samples
// (test/fixtures/k8saudit-samples). Expected values were derived from the sample files with
// jq and GNU date (missing JSON keys = missing fields, numbers as their JSON text), not from this
// code: the common table per event, then per-kind tables for pods, roles, bindings, services,
// configmaps and exec/attach.
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fieldTable } from '../../../host/engine/fields.js';
import { auditEventTimeNs, extractAuditField, type AuditEvent, type FieldValue } from '../../../host/sources/audit/extract.js';
import { K8SAUDIT_SAMPLES_URL } from '../../../support/corpus.js';

const DIR = K8SAUDIT_SAMPLES_URL;

function events(file: string): AuditEvent[] {
  return readFileSync(new URL(file, DIR), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((raw) => ({ json: JSON.parse(raw) as unknown, raw }));
}

/** `name` or `name[arg]` to (name, arg). */
function ref(field: string): [string, string | undefined] {
  const b = field.indexOf('[');
  return b < 0 ? [field, undefined] : [field.slice(0, b), field.slice(b + 1, -1)];
}

const get = (ev: AuditEvent, field: string): FieldValue | undefined => extractAuditField(ev, ...ref(field));

type Common = [verb: string | null, resource: string | null, subresource: string | null, namespace: string | null, name: string | null, user: string | null, code: string | null, stage: string | null];

// [file, line, [ka.verb, ka.target.resource, ka.target.subresource, ka.target.namespace,
//  ka.target.name, ka.user.name, ka.response.code, jevt.value[/stage]], stageTimestamp ns]
const COMMON: Array<[string, number, Common, bigint | undefined]> = [
  ['anonymous_creates_namespace_foo.json', 0, ['create', 'namespaces', null, null, 'foo', 'system:anonymous', '201', 'ResponseComplete'], 1540475929736141000n],
  ['attach_cluster_admin_role.json', 0, ['create', 'clusterrolebindings', null, null, 'some-reader-binding', 'minikube-user', '201', 'ResponseComplete'], 1540563994242498000n],
  ['attach_pod.json', 0, ['create', 'pods', 'attach', 'default', 'nginx-deployment-7998647bdf-phvq7', 'minikube-user', '101', 'ResponseStarted'], 1540561366808261000n],
  ['create_cluster_role_pod_exec.json', 0, ['create', 'clusterroles', null, null, 'some-reader', 'minikube-user', '201', 'ResponseComplete'], 1540564550627514000n],
  ['create_cluster_role_wildcard_resources.json', 0, ['create', 'clusterroles', null, null, 'some-reader', 'minikube-user', '201', 'ResponseComplete'], 1540563713889736000n],
  ['create_cluster_role_wildcard_verbs.json', 0, ['create', 'clusterroles', null, null, 'some-reader', 'minikube-user', '201', 'ResponseComplete'], 1540563892741516000n],
  ['create_cluster_role_write_privileges.json', 0, ['create', 'clusterroles', null, null, 'some-reader', 'minikube-user', '201', 'ResponseComplete'], 1540564352182250000n],
  ['create_clusterrole.json', 0, ['create', 'clusterroles', null, null, 'some-reader', 'minikube-user', '201', 'ResponseComplete'], 1540560318275010000n],
  ['create_clusterrolebinding.json', 0, ['create', 'clusterrolebindings', null, null, 'some-reader-binding', 'minikube-user', '201', 'ResponseComplete'], 1540560318286399000n],
  ['create_configmap.json', 0, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540559583544952000n],
  ['create_configmap_no_sensitive_values.json', 0, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547702209473000n],
  ['create_configmap_sensitive_values.json', 0, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547480717013000n],
  ['create_configmap_sensitive_values.json', 1, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547495562843000n],
  ['create_configmap_sensitive_values.json', 2, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547513350181000n],
  ['create_configmap_sensitive_values.json', 3, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547527608730000n],
  ['create_configmap_sensitive_values.json', 4, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547540659835000n],
  ['create_configmap_sensitive_values.json', 5, ['create', 'configmaps', null, 'default', 'my-config', 'minikube-user', '201', 'ResponseComplete'], 1540547552993095000n],
  ['create_deployment.json', 0, ['create', 'deployments', null, 'default', 'nginx-deployment', 'minikube-user', '201', 'ResponseComplete'], 1540559256911442000n],
  ['create_kube_system_secret.json', 0, ['create', 'secrets', null, 'kube-system', 'bootstrap-token-ne7bxu', 'admin', '201', 'ResponseComplete'], 1585076029025530000n],
  ['create_nginx_pod_hostnetwork.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540544968675492000n],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540489987006845000n],
  ['create_nginx_pod_nohostnetwork.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540545216445965000n],
  ['create_nginx_pod_privileged.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540476552581541000n],
  ['create_nginx_pod_privileged_2nd_container.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540489987006845000n],
  ['create_nginx_pod_sensitive_mount.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540488971693676000n],
  ['create_nginx_pod_sensitive_mount_2nd_container.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540490118926631000n],
  ['create_nginx_pod_unprivileged.json', 0, ['create', 'pods', null, 'default', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540476589761315000n],
  ['create_nginx_pod_unsensitive_mount.json', 0, ['get', 'pods', null, 'default', 'nginx-deployment-6dfd8b84dc-6dkjc', 'system:node:minikube', '200', 'ResponseComplete'], 1540489448583534000n],
  ['create_nginx_service_nodeport.json', 0, ['create', 'services', null, 'default', 'nginx', 'minikube-user', '201', 'ResponseComplete'], 1540546296134295000n],
  ['create_nginx_service_nonodeport.json', 0, ['create', 'services', null, 'default', 'nginx', 'minikube-user', '201', 'ResponseComplete'], 1540546716493490000n],
  ['create_pod_kube_public_namespace.json', 0, ['create', 'pods', null, 'kube-public', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540561759465798000n],
  ['create_pod_kube_system_namespace.json', 0, ['create', 'pods', null, 'kube-system', null, 'system:serviceaccount:kube-system:replicaset-controller', '201', 'ResponseComplete'], 1540561640367055000n],
  ['create_secret.json', 0, ['create', 'secrets', null, 'default', 'example-secret', 'minikube-user', '201', 'ResponseComplete'], 1587491825548299000n],
  ['create_service.json', 0, ['create', 'services', null, 'default', 'nginx', 'minikube-user', '201', 'ResponseComplete'], 1540559524420072000n],
  ['create_service_account_token_secret.json', 0, ['create', 'secrets', null, 'test2', 'default-token-7v4pb', 'system:kube-controller-manager', '201', 'ResponseComplete'], 1587490349942468000n],
  ['create_serviceaccount.json', 0, ['create', 'serviceaccounts', null, 'default', 'myacct', 'minikube-user', '201', 'ResponseComplete'], 1540559962135026000n],
  ['create_serviceaccount_kube_public_namespace.json', 0, ['create', 'serviceaccounts', null, 'kube-public', 'myacct', 'minikube-user', '201', 'ResponseComplete'], 1540562216608329000n],
  ['create_serviceaccount_kube_system_namespace.json', 0, ['create', 'serviceaccounts', null, 'kube-system', 'myacct', 'minikube-user', '201', 'ResponseComplete'], 1540562203585256000n],
  ['delete_cluster_role_kube_aggregator.json', 0, ['delete', 'clusterroles', null, null, 'system:kube-aggregator', 'minikube-user', '200', 'ResponseComplete'], 1540562574911160000n],
  ['delete_clusterrole.json', 0, ['delete', 'clusterroles', null, null, 'some-reader', 'minikube-user', '200', 'ResponseComplete'], 1540560337813327000n],
  ['delete_clusterrolebinding.json', 0, ['delete', 'clusterrolebindings', null, null, 'some-reader-binding', 'minikube-user', '200', 'ResponseComplete'], 1540560347041484000n],
  ['delete_configmap.json', 0, ['delete', 'configmaps', null, 'default', 'my-config', 'minikube-user', '200', 'ResponseComplete'], 1540559613773884000n],
  ['delete_deployment.json', 0, ['delete', 'deployments', null, 'default', 'nginx-deployment', 'minikube-user', '200', 'ResponseComplete'], 1540559367548380000n],
  ['delete_namespace_foo.json', 0, ['delete', 'namespaces', null, 'foo', 'foo', 'minikube-user', '200', 'ResponseComplete'], 1540558825246927000n],
  ['delete_secret.json', 0, ['delete', 'secrets', null, 'default', 'example-secret', 'minikube-user', '200', 'ResponseComplete'], 1587491929696309000n],
  ['delete_service.json', 0, ['delete', 'services', null, 'default', 'nginx', 'minikube-user', '200', 'ResponseComplete'], 1540559462065150000n],
  ['delete_serviceaccount.json', 0, ['delete', 'serviceaccounts', null, 'default', 'myacct', 'minikube-user', '200', 'ResponseComplete'], 1540559970044205000n],
  ['exec_pod.json', 0, ['create', 'pods', 'exec', 'default', 'nginx-deployment-7998647bdf-phvq7', 'minikube-user', '101', 'ResponseStarted'], 1540561114902914000n],
  ['fal_01_003.json', 0, [null, null, null, null, null, null, null, null], undefined],
  ['minikube_creates_namespace_foo.json', 0, ['create', 'namespaces', null, null, 'foo', 'minikube-user', '201', 'ResponseComplete'], 1540561961558192000n],
  ['modify_cluster_role_node_problem_detector.json', 0, ['patch', 'clusterroles', null, null, 'system:node-problem-detector', 'minikube-user', '200', 'ResponseComplete'], 1540563111039120000n],
  ['plugins-k8saudit-container_lists_test-pod.json', 0, [null, null, null, null, null, null, null, null], undefined],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 0, ['get', 'pods', null, 'default', 'test', 'test', '200', 'ResponseComplete'], 1672531201000000000n],
  ['some-user_creates_namespace_foo.json', 0, ['create', 'namespaces', null, null, 'foo', 'some-user', '201', 'ResponseComplete'], 1540475929736141000n],
];

const COMMON_FIELDS = ['ka.verb', 'ka.target.resource', 'ka.target.subresource', 'ka.target.namespace', 'ka.target.name', 'ka.user.name', 'ka.response.code', 'jevt.value[/stage]'];

test('the common table covers every event of every sample file', () => {
  const files = readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const covered = new Map<string, number>();
  for (const [file] of COMMON) covered.set(file, (covered.get(file) ?? 0) + 1);
  assert.equal([...covered.keys()].sort(), files);
  for (const file of files) assert.is(covered.get(file), Math.max(events(file).length, 1), file);
});

for (const [file, line, want, timeNs] of COMMON) {
  test(`${file}#${line}: common fields and time`, () => {
    const ev = events(file)[line]!;
    const got = COMMON_FIELDS.map((f) => get(ev, f) ?? null);
    assert.equal(got, want);
    assert.is(auditEventTimeNs(ev), timeNs);
    assert.is(get(ev, 'jevt.rawtime'), timeNs === undefined ? undefined : String(timeNs));
    assert.is(get(ev, 'ka.stage'), want[7] ?? undefined);
  });
}

test('fal_01_003.json ({"kind": 0}): every ka.* field is missing, json fields still read the object', () => {
  const [ev] = events('fal_01_003.json');
  for (const d of fieldTable('k8s_audit')) {
    if (!d.name.startsWith('ka.')) continue;
    const arg = d.arg === 'required' ? 'x' : undefined;
    assert.is(extractAuditField(ev!, d.name, arg), undefined, d.name);
  }
  assert.is(get(ev!, 'jevt.value[/kind]'), '0');
  assert.is(get(ev!, 'jevt.rawtime'), undefined);
  assert.is(get(ev!, 'jevt.obj'), '{\n  "kind": 0\n}');
});

// [file, field, expected] — pods (requestObject.spec), from jq over the samples.
const PODS: Array<[string, string, FieldValue | undefined]> = [
  ['create_nginx_pod_hostnetwork.json', 'ka.req.pod.containers.image', ['nginx']],
  ['create_nginx_pod_hostnetwork.json', 'ka.req.pod.host_network', 'true'],
  ['create_nginx_pod_hostnetwork.json', 'ka.req.pod.containers.privileged', undefined],
  ['create_nginx_pod_nohostnetwork.json', 'ka.req.pod.host_network', undefined],
  ['create_nginx_pod_privileged.json', 'ka.req.pod.containers.privileged', ['true']],
  ['create_nginx_pod_privileged.json', 'ka.req.container.privileged', 'true'],
  ['create_nginx_pod_unprivileged.json', 'ka.req.pod.containers.privileged', undefined],
  ['create_nginx_pod_unprivileged.json', 'ka.req.container.privileged', 'false'],
  ['create_nginx_pod_privileged_2nd_container.json', 'ka.req.pod.containers.privileged', ['false', 'true']],
  ['create_nginx_pod_privileged_2nd_container.json', 'ka.req.pod.containers.privileged[1]', ['true']],
  ['create_nginx_pod_privileged_2nd_container.json', 'ka.req.pod.containers.privileged[2]', undefined],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.privileged', ['true']],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.privileged[0]', undefined],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.image', ['nginx', 'mysql:latest']],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.image.repository', ['nginx', 'mysql']],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.name', ['nginx1', 'mysql']],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.container.image', 'nginx'],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'ka.req.pod.containers.eff_run_as_user', ['0', '0']],
  ['create_nginx_pod_no_secctx_1st_container_privileged_2nd_container.json', 'jevt.value[/requestObject/spec/containers/1/image]', 'mysql:latest'],
  ['create_nginx_pod_sensitive_mount.json', 'ka.req.pod.volumes.hostpath', ['/etc']],
  ['create_nginx_pod_sensitive_mount.json', 'ka.req.pod.volumes.volume_type', ['hostPath']],
  ['create_nginx_pod_sensitive_mount.json', 'ka.req.volume.hostpath[/etc]', 'true'],
  ['create_nginx_pod_sensitive_mount.json', 'ka.req.volume.hostpath[/e*]', 'true'],
  ['create_nginx_pod_sensitive_mount.json', 'ka.req.volume.hostpath[/var]', 'false'],
  ['create_nginx_pod_sensitive_mount_2nd_container.json', 'ka.req.pod.volumes.hostpath', ['/etc']],
  ['create_nginx_pod_sensitive_mount_2nd_container.json', 'ka.req.pod.containers.image.repository', ['nginx', 'mysql']],
  ['create_nginx_pod_unsensitive_mount.json', 'ka.req.pod.containers.image', undefined],
  ['create_nginx_pod_unsensitive_mount.json', 'ka.req.pod.volumes.hostpath', undefined],
  ['create_pod_kube_system_namespace.json', 'ka.req.pod.volumes.hostpath', undefined],
  ['create_pod_kube_system_namespace.json', 'ka.resp.name', 'nginx-deployment-7998647bdf-7q2sp'],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.containers.privileged', ['false']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.initContainers.privileged', ['true']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.ephemeralContainers.privileged', ['true']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.containers.image', ['reg.example.com/c:1']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.initContainers.image', ['reg.example.com/i:1']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.ephemeralContainers.image.repository', ['reg.example.com/e']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.req.pod.initContainers.name', ['i']],
  ['plugins-k8saudit-container_lists_test-pod.json', 'ka.verb', undefined],
  ['plugins-k8saudit-container_lists_test-pod.json', 'jevt.value[/requestObject/ephemeralContainers/0/image]', undefined],
  ['plugins-k8saudit-container_lists_test-pod.json', 'jevt.value[/requestObject/spec/ephemeralContainers/0/image]', 'reg.example.com/e:1'],
];

// Roles, bindings, services, configmaps, secrets, exec/attach and the watch-test event.
const OBJECTS: Array<[string, string, FieldValue | undefined]> = [
  ['create_cluster_role_wildcard_verbs.json', 'ka.req.role.rules.verbs', ['*', 'get']],
  ['create_cluster_role_wildcard_verbs.json', 'ka.req.role.rules.resources', ['pods']],
  ['create_cluster_role_wildcard_verbs.json', 'ka.req.role.rules.verbs[1]', ['get']],
  ['create_cluster_role_wildcard_verbs.json', 'ka.req.role.rules.resources[1]', undefined],
  ['create_cluster_role_wildcard_verbs.json', 'ka.req.role.rules.apiGroups', ['']],
  ['create_cluster_role_wildcard_resources.json', 'ka.req.role.rules.resources', ['*']],
  ['create_cluster_role_wildcard_resources.json', 'ka.req.role.rules.verbs', ['get', 'list', 'get']],
  ['create_cluster_role_pod_exec.json', 'ka.req.role.rules.resources', ['pods/exec']],
  ['create_cluster_role_write_privileges.json', 'ka.req.role.rules.verbs', ['get', 'delete']],
  [
    'create_clusterrole.json',
    'ka.req.role.rules',
    [
      '{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}',
      '{"nonResourceURLs":["/api","/api/*","/apis","/apis/*","/healthz","/openapi","/openapi/*","/swagger-2.0.0.pb-v1","/swagger.json","/swaggerapi","/swaggerapi/*","/version","/version/"],"verbs":["get"]}',
    ],
  ],
  ['modify_cluster_role_node_problem_detector.json', 'ka.req.role.rules.verbs', ['get', 'patch', 'create', 'patch', 'update', 'list']],
  ['modify_cluster_role_node_problem_detector.json', 'ka.req.role.rules.resources', ['nodes', 'nodes/status', 'events']],
  ['delete_clusterrole.json', 'ka.req.role.rules.verbs', undefined],
  ['create_clusterrolebinding.json', 'ka.req.binding.role', 'system:basic-user'],
  ['create_clusterrolebinding.json', 'ka.req.binding.subjects', ['{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"minikube"}']],
  ['create_clusterrolebinding.json', 'ka.req.binding.subjects.user_names', ['minikube']],
  ['create_clusterrolebinding.json', 'ka.req.binding.subjects.group_names', undefined],
  ['attach_cluster_admin_role.json', 'ka.req.binding.role', 'cluster-admin'],
  ['delete_clusterrolebinding.json', 'ka.req.binding.role', undefined],
  ['create_nginx_service_nodeport.json', 'ka.req.service.type', 'NodePort'],
  ['create_nginx_service_nodeport.json', 'ka.req.service.ports', ['{"nodePort":30080,"port":80,"protocol":"TCP","targetPort":80}']],
  ['create_nginx_service_nonodeport.json', 'ka.req.service.type', 'ClusterIP'],
  ['create_service.json', 'ka.req.service.ports[0]', ['{"port":80,"protocol":"TCP","targetPort":80}']],
  ['create_service.json', 'ka.req.service.ports[1]', undefined],
  ['delete_service.json', 'ka.req.service.type', undefined],
  ['create_configmap.json', 'ka.req.configmap.name', 'my-config'],
  ['create_configmap.json', 'ka.req.configmap.obj', '{"ui.properties":"color.good=purple\\ncolor.bad=yellow\\nallow.textmode=true\\n"}'],
  ['delete_configmap.json', 'ka.req.configmap.obj', undefined],
  ['create_kube_system_secret.json', 'ka.useragent', 'kubeadm/v1.16.2 (linux/amd64) kubernetes/c97fe50'],
  ['create_service_account_token_secret.json', 'ka.auth.reason', 'RBAC: allowed by ClusterRoleBinding "system:kube-controller-manager" of ClusterRole "system:kube-controller-manager" to User "system:kube-controller-manager"'],
  ['create_service_account_token_secret.json', 'ka.user.groups', ['system:authenticated']],
  ['create_secret.json', 'ka.sourceips', ['192.168.64.1']],
  ['create_secret.json', 'ka.sourceips[0]', ['192.168.64.1']],
  ['create_secret.json', 'ka.sourceips[1]', undefined],
  ['exec_pod.json', 'ka.uri.param[command]', 'bash'],
  ['exec_pod.json', 'ka.uri.param[container]', 'nginx1'],
  ['exec_pod.json', 'ka.uri.param[nothing]', undefined],
  ['exec_pod.json', 'ka.auth.decision', 'allow'],
  ['exec_pod.json', 'ka.auth.reason', ''],
  ['attach_pod.json', 'ka.uri.param[stderr]', 'true'],
  ['attach_pod.json', 'ka.uri.param[command]', undefined],
  ['anonymous_creates_namespace_foo.json', 'ka.uri.param[x]', undefined],
  ['anonymous_creates_namespace_foo.json', 'ka.impuser.name', undefined],
  ['anonymous_creates_namespace_foo.json', 'ka.response.reason', undefined],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'ka.auditid', 'test'],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'ka.auth.decision', undefined],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'ka.user.groups', undefined],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'ka.target.pod.name', 'test'],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'jevt.value[/responseStatus]', '{"metadata":{},"code":200}'],
  ['plugins-k8saudit-watch_test-testAuditEvent.json', 'json.value[/objectRef/name]', 'test'],
];

for (const [file, field, want] of [...PODS, ...OBJECTS]) {
  test(`${file}: ${field}`, () => {
    assert.equal(get(events(file)[0]!, field), want);
  });
}

test('jevt.obj is the event re-indented as Go json.Indent does', () => {
  const [ev] = events('plugins-k8saudit-watch_test-testAuditEvent.json');
  const want = [
    '{',
    '  "kind": "Event",',
    '  "apiVersion": "audit.k8s.io/v1",',
    '  "level": "Metadata",',
    '  "auditID": "test",',
    '  "stage": "ResponseComplete",',
    '  "requestURI": "/api",',
    '  "verb": "get",',
    '  "user": {',
    '    "username": "test"',
    '  },',
    '  "sourceIPs": [',
    '    "127.0.0.1"',
    '  ],',
    '  "objectRef": {',
    '    "resource": "pods",',
    '    "namespace": "default",',
    '    "name": "test"',
    '  },',
    '  "responseStatus": {',
    '    "metadata": {},',
    '    "code": 200',
    '  },',
    '  "requestReceivedTimestamp": "2023-01-01T00:00:00.000000Z",',
    '  "stageTimestamp": "2023-01-01T00:00:01.000000Z"',
    '}',
  ].join('\n');
  assert.is(get(ev!, 'jevt.obj'), want);
  assert.is(get({ json: ev!.json }, 'json.obj'), want);
});

test.run();
