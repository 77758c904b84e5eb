// Audit actions: each POSTs one realistic audit event to the webhook, for a rule of the built-in
// orchestrator audit set (rules/orchestrator-audit). The events are made so that, with rule
// matching `first`, the named rule is the first that matches (the user is an allowed
// administrator, so `Disallowed K8s User` stays quiet unless it is the target). Rules that the
// default set disables through a macro (All K8s Audit Events, Full K8s Administrative Access,
// Untrusted Node ...) have no action.
import { auditEvent, created, pod, role, type ApiRequest } from './audit-events.js';
import type { Action } from './types.js';

interface AuditSpec {
  name: string;
  rule: string;
  description: string;
  request(): ApiRequest;
}

const RBAC = 'rbac.authorization.k8s.io';
const podCreate = (name: string, namespace: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}): ApiRequest => {
  const obj = pod(name, namespace, spec, container);
  return { verb: 'create', resource: 'pods', namespace, name, requestObject: obj, responseObject: created(obj) };
};
const createObject = (resource: string, obj: Record<string, unknown>, group?: string): ApiRequest => {
  const meta = obj.metadata as { name: string; namespace?: string };
  return { verb: 'create', resource, group, namespace: meta.namespace, name: meta.name, requestObject: obj, responseObject: created(obj) };
};

const SPECS: AuditSpec[] = [
  { name: 'CreatePrivilegedPod', rule: 'Create Privileged Pod', description: 'create a pod whose container is privileged', request: () => podCreate('rae-eg-privileged', 'default', {}, { securityContext: { privileged: true } }) },
  {
    name: 'CreateSensitiveMountPod',
    rule: 'Create Sensitive Mount Pod',
    description: 'create a pod mounting the host /etc',
    request: () => podCreate('rae-eg-mount', 'default', { volumes: [{ name: 'host-etc', hostPath: { path: '/etc', type: '' } }] }, { volumeMounts: [{ name: 'host-etc', mountPath: '/host/etc' }] }),
  },
  { name: 'CreateHostNetworkPod', rule: 'Create HostNetwork Pod', description: 'create a pod on the host network', request: () => podCreate('rae-eg-hostnet', 'default', { hostNetwork: true }) },
  { name: 'CreateHostPidPod', rule: 'Create HostPid Pod', description: 'create a pod in the host PID namespace', request: () => podCreate('rae-eg-hostpid', 'default', { hostPID: true }) },
  { name: 'CreateHostIpcPod', rule: 'Create HostIPC Pod', description: 'create a pod in the host IPC namespace', request: () => podCreate('rae-eg-hostipc', 'default', { hostIPC: true }) },
  {
    name: 'CreateNodePortService',
    rule: 'Create NodePort Service',
    description: 'create a NodePort service',
    request: () =>
      createObject('services', {
        kind: 'Service',
        apiVersion: 'v1',
        metadata: { name: 'rae-eg-nodeport', namespace: 'default' },
        spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, nodePort: 30080, protocol: 'TCP' }] },
      }),
  },
  {
    name: 'CreateConfigMapWithPrivateCredentials',
    rule: 'Create/Modify Configmap With Private Credentials',
    description: 'create a ConfigMap holding AWS keys',
    request: () =>
      createObject('configmaps', {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'rae-eg-creds', namespace: 'default' },
        data: { 'credentials.ini': '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n' },
      }),
  },
  {
    name: 'AnonymousRequestAllowed',
    rule: 'Anonymous Request Allowed',
    description: 'an anonymous request that the authorizer allowed',
    request: () => ({ verb: 'get', resource: 'namespaces', name: 'default', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } }),
  },
  {
    name: 'ExecIntoPod',
    rule: 'Attach/Exec Pod',
    description: 'exec a shell in a pod (kubectl exec -it web -- bash)',
    request: () => ({ verb: 'create', resource: 'pods', namespace: 'default', name: 'web-7c5ddbdf54-x2kqm', subresource: 'exec', query: 'command=bash&container=web&stdin=true&stdout=true&tty=true', stage: 'ResponseStarted', code: 101 }),
  },
  {
    name: 'PortForwardToPod',
    rule: 'port-forward',
    description: 'port-forward to a pod (kubectl port-forward web 8080:80)',
    request: () => ({ verb: 'create', resource: 'pods', namespace: 'default', name: 'web-7c5ddbdf54-x2kqm', subresource: 'portforward', stage: 'ResponseStarted', code: 101 }),
  },
  {
    name: 'CreateEphemeralContainer',
    rule: 'EphemeralContainers Created',
    description: 'add a debug container to a running pod (kubectl debug)',
    request: () => ({
      verb: 'patch',
      resource: 'pods',
      namespace: 'default',
      name: 'web-7c5ddbdf54-x2kqm',
      subresource: 'ephemeralcontainers',
      requestObject: { ephemeralContainers: [{ name: 'debugger-rae', image: 'busybox:1.36', stdin: true, tty: true }] },
    }),
  },
  {
    name: 'CreateDisallowedNamespace',
    rule: 'Create Disallowed Namespace',
    description: 'create a namespace outside the allowed list',
    request: () => createObject('namespaces', { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'rae-eg-namespace' } }),
  },
  { name: 'CreatePodInKubeNamespace', rule: 'Pod Created in Kube Namespace', description: 'create a pod in kube-system', request: () => podCreate('rae-eg-kube-pod', 'kube-system') },
  {
    name: 'CreateServiceAccountInKubeNamespace',
    rule: 'Service Account Created in Kube Namespace',
    description: 'create a service account in kube-system',
    request: () => createObject('serviceaccounts', { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'rae-eg-sa', namespace: 'kube-system' } }),
  },
  {
    name: 'ModifySystemClusterRole',
    rule: 'System ClusterRole Modified/Deleted',
    description: 'patch a system: ClusterRole',
    request: () => ({ verb: 'patch', resource: 'clusterroles', group: RBAC, name: 'system:aggregate-to-edit', requestObject: { metadata: { labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } } } }),
  },
  {
    name: 'AttachToClusterAdminRole',
    rule: 'Attach to cluster-admin Role',
    description: 'bind a user to cluster-admin',
    request: () =>
      createObject(
        'clusterrolebindings',
        {
          kind: 'ClusterRoleBinding',
          apiVersion: `${RBAC}/v1`,
          metadata: { name: 'rae-eg-admin-binding' },
          roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC, name: 'mallory' }],
        },
        RBAC,
      ),
  },
  {
    name: 'ClusterRoleWithWildcardCreated',
    rule: 'ClusterRole With Wildcard Created',
    description: 'create a ClusterRole granting * on *',
    request: () => createObject('clusterroles', role('ClusterRole', 'rae-eg-wildcard', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]), RBAC),
  },
  {
    name: 'ClusterRoleWithWritePrivilegesCreated',
    rule: 'ClusterRole With Write Privileges Created',
    description: 'create a ClusterRole that can create and delete deployments',
    request: () => createObject('clusterroles', role('ClusterRole', 'rae-eg-writer', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'create', 'delete'] }]), RBAC),
  },
  {
    name: 'ClusterRoleWithPodExecCreated',
    rule: 'ClusterRole With Pod Exec Created',
    description: 'create a ClusterRole that reaches pods/exec',
    request: () => createObject('clusterroles', role('ClusterRole', 'rae-eg-exec', [{ resources: ['pods', 'pods/exec'], verbs: ['get'] }]), RBAC),
  },
  {
    name: 'DeploymentCreated',
    rule: 'K8s Deployment Created',
    description: 'create a deployment',
    request: () => {
      const p = pod('web', 'default');
      return createObject(
        'deployments',
        { kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'rae-eg-web', namespace: 'default' }, spec: { replicas: 2, selector: { matchLabels: { run: 'web' } }, template: { metadata: p.metadata, spec: p.spec } } },
        'apps',
      );
    },
  },
  {
    name: 'ServiceCreated',
    rule: 'K8s Service Created',
    description: 'create a ClusterIP service',
    request: () => createObject('services', { kind: 'Service', apiVersion: 'v1', metadata: { name: 'rae-eg-svc', namespace: 'default' }, spec: { type: 'ClusterIP', selector: { run: 'web' }, ports: [{ port: 80, protocol: 'TCP' }] } }),
  },
  {
    name: 'ConfigMapCreated',
    rule: 'K8s ConfigMap Created',
    description: 'create a plain ConfigMap',
    request: () => createObject('configmaps', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'rae-eg-settings', namespace: 'default' }, data: { 'log.level': 'info' } }),
  },
  {
    name: 'ServiceAccountCreated',
    rule: 'K8s Serviceaccount Created',
    description: 'create a service account in default',
    request: () => createObject('serviceaccounts', { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'rae-eg-app', namespace: 'default' } }),
  },
  { name: 'RoleCreated', rule: 'K8s Role Created', description: 'create a read-only Role', request: () => createObject('roles', role('Role', 'rae-eg-reader', [{ resources: ['pods'], verbs: ['get', 'list'] }], 'default'), RBAC) },
  {
    name: 'RoleBindingCreated',
    rule: 'K8s RoleBinding Created',
    description: 'bind a service account to a Role',
    request: () =>
      createObject(
        'rolebindings',
        {
          kind: 'RoleBinding',
          apiVersion: `${RBAC}/v1`,
          metadata: { name: 'rae-eg-reader-binding', namespace: 'default' },
          roleRef: { apiGroup: RBAC, kind: 'Role', name: 'rae-eg-reader' },
          subjects: [{ kind: 'ServiceAccount', name: 'rae-eg-app', namespace: 'default' }],
        },
        RBAC,
      ),
  },
  {
    name: 'SecretCreated',
    rule: 'K8s Secret Created',
    description: 'create a secret',
    request: () => createObject('secrets', { kind: 'Secret', apiVersion: 'v1', type: 'Opaque', metadata: { name: 'rae-eg-secret', namespace: 'default' }, data: { token: Buffer.from('not-a-real-token').toString('base64') } }),
  },
  { name: 'SecretRead', rule: 'K8s Secret Get Successfully', description: 'read a secret', request: () => ({ verb: 'get', resource: 'secrets', namespace: 'default', name: 'rae-eg-secret' }) },
  { name: 'SecretDeleted', rule: 'K8s Secret Deleted', description: 'delete a secret', request: () => ({ verb: 'delete', resource: 'secrets', namespace: 'default', name: 'rae-eg-secret' }) },
  {
    name: 'DisallowedK8sUser',
    rule: 'Disallowed K8s User',
    description: 'a request by a user outside allowed_k8s_users',
    request: () => ({ verb: 'list', resource: 'pods', namespace: 'default', user: { username: 'mallory', groups: ['system:authenticated'] } }),
  },
  {
    name: 'IngressWithoutTls',
    rule: 'Ingress Object without TLS Certificate Created',
    description: 'create an ingress without TLS',
    request: () =>
      createObject(
        'ingresses',
        {
          kind: 'Ingress',
          apiVersion: 'networking.k8s.io/v1',
          metadata: { name: 'rae-eg-ingress', namespace: 'default' },
          spec: { rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'rae-eg-svc', port: { number: 80 } } } }] } }] },
        },
        'networking.k8s.io',
      ),
  },
];

/** Every audit action. */
export const AUDIT_ACTIONS: Action[] = SPECS.map((s) => ({
  name: `k8saudit.${s.name}`,
  source: 'k8s_audit',
  rule: s.rule,
  description: s.description,
  run: (ctx) => ctx.postAudit([auditEvent(s.request())]),
}));
