// ka.* fields of the `k8s_audit` source (k8saudit plugin, plugins:plugins/k8saudit/pkg/k8saudit/
// fields.go and its README field table at the corpus snapshot) and the json plugin's json.* /
// jevt.* fields (plugins:plugins/json/pkg/json/json.go). Every field is a string; "(list)" ones
// are list fields, most with an optional [N] index. How values are extracted is in
// host/sources/audit/extract.ts.
import { fieldMaker, INDEXED_LIST, type FieldDef } from './types.js';

const f = fieldMaker('k8s_audit', 'k8saudit plugin');
const s = (name: string, desc: string) => f(name, 'PT_CHARBUF', desc);
const list = (name: string, desc: string) => f(name, 'PT_CHARBUF', desc, { isList: true });
const indexed = (name: string, desc: string) => f(name, 'PT_CHARBUF', desc, INDEXED_LIST);
const keyed = (name: string, desc: string) => f(name, 'PT_CHARBUF', desc, { arg: 'required', argKind: 'key' });

/** Per-container fields, repeated for containers, initContainers and ephemeralContainers. */
function containerListFields(list: 'containers' | 'initContainers' | 'ephemeralContainers'): FieldDef[] {
  const who = list === 'containers' ? "the container's" : list === 'initContainers' ? 'the init containers' : 'the ephemeral containers';
  const p = `ka.req.pod.${list}`;
  return [
    indexed(`${p}.name`, `When the request object refers to a pod, ${who} names.`),
    indexed(`${p}.image`, `When the request object refers to a pod, ${who} images.`),
    indexed(`${p}.image.repository`, `The same as ${p}.image, but only the repository part (e.g. falcosecurity/falco).`),
    indexed(`${p}.command`, `When the request object refers to a pod, ${who} commands.`),
    indexed(`${p}.args`, `When the request object refers to a pod, ${who} args.`),
    indexed(`${p}.privileged`, `When the request object refers to a pod, the privileged flag of ${who}.`),
    indexed(`${p}.allow_privilege_escalation`, `When the request object refers to a pod, the allowPrivilegeEscalation flag of ${who}.`),
    indexed(`${p}.read_only_fs`, `When the request object refers to a pod, the readOnlyRootFilesystem flag of ${who}.`),
    indexed(`${p}.run_as_user`, `When the request object refers to a pod, the runAsUser uid of ${who}.`),
    indexed(`${p}.eff_run_as_user`, `When the request object refers to a pod, the initial uid of ${who}: container, else pod security context, else 0.`),
    indexed(`${p}.run_as_group`, `When the request object refers to a pod, the runAsGroup gid of ${who}.`),
    indexed(`${p}.eff_run_as_group`, `When the request object refers to a pod, the initial gid of ${who}: container, else pod security context, else 0.`),
    indexed(`${p}.proc_mount`, `When the request object refers to a pod, the procMount type of ${who}.`),
    indexed(`${p}.add_capabilities`, `When the request object refers to a pod, the capabilities added to ${who}.`),
    indexed(`${p}.host_port`, `When the request object refers to a pod, the hostPort values of ${who} (containerPort when no hostPort).`),
  ];
}

/** The k8saudit plugin's fields. */
export const K8SAUDIT_FIELDS: readonly FieldDef[] = [
  s('ka.auditid', 'The unique id of the audit event.'),
  s('ka.stage', 'Stage of the request (e.g. RequestReceived, ResponseComplete).'),
  s('ka.auth.decision', 'The authorization decision.'),
  s('ka.auth.reason', 'The authorization reason.'),
  s('ka.auth.openshift.decision', 'The authentication decision of the OpenShift API server extension (OpenShift only).'),
  s('ka.validations.admission.policy.failure', 'The validation failure reason of a Validating Admission Policy.'),
  s('ka.security.pod.violations', 'The violation reason for pod security policy.'),
  s('ka.auth.openshift.username', 'The user name of the OpenShift authentication operation (OpenShift only).'),
  s('ka.user.name', 'The user name performing the request.'),
  list('ka.user.groups', 'The groups to which the user belongs.'),
  s('ka.impuser.name', 'The impersonated user name.'),
  s('ka.verb', 'The action being performed.'),
  s('ka.uri', 'The request URI as sent from client to server.'),
  keyed('ka.uri.param', 'The value of a query parameter of the URI (uri=/foo?key=val: ka.uri.param[key] is val).'),
  s('ka.target.name', 'The target object name.'),
  s('ka.target.namespace', 'The target object namespace.'),
  s('ka.target.resource', 'The target object resource.'),
  s('ka.target.subresource', 'The target object subresource.'),
  s('ka.target.pod.name', 'The target pod name.'),
  list('ka.req.binding.subjects', 'When the request object refers to a cluster role binding, the subjects being linked.'),
  list('ka.req.binding.subjects.user_names', 'When the request object refers to a cluster role binding, the subject user names.'),
  list('ka.req.binding.subjects.serviceaccount_names', 'When the request object refers to a cluster role binding, the subject service account names.'),
  list('ka.req.binding.subjects.serviceaccount_ns_names', "When the request object refers to a cluster role binding, the subject service accounts as 'namespace:name'."),
  list('ka.req.binding.subjects.group_names', 'When the request object refers to a cluster role binding, the subject group names.'),
  s('ka.req.binding.role', 'When the request object refers to a cluster role binding, the role being linked.'),
  keyed('ka.req.binding.subject.has_name', 'Deprecated, always "true". Only provided for backwards compatibility.'),
  s('ka.req.configmap.name', 'If the request object refers to a configmap, the configmap name.'),
  s('ka.req.configmap.obj', 'If the request object refers to a configmap, the entire configmap data.'),
  ...containerListFields('containers'),
  s('ka.req.container.image', 'Deprecated by ka.req.pod.containers.image: the image of the first container.'),
  s('ka.req.container.image.repository', 'Deprecated by ka.req.pod.containers.image.repository: the repository of the first container.'),
  s('ka.req.pod.host_ipc', 'When the request object refers to a pod, the value of the hostIPC flag.'),
  s('ka.req.pod.host_network', 'When the request object refers to a pod, the value of the hostNetwork flag.'),
  s('ka.req.container.host_network', 'Deprecated alias of ka.req.pod.host_network.'),
  s('ka.req.pod.host_pid', 'When the request object refers to a pod, the value of the hostPID flag.'),
  s('ka.req.container.privileged', 'Deprecated by ka.req.pod.containers.privileged: "true" if any container is privileged.'),
  s('ka.req.pod.run_as_user', 'When the request object refers to a pod, the runAsUser of the pod security context.'),
  s('ka.req.pod.run_as_group', 'When the request object refers to a pod, the runAsGroup of the pod security context.'),
  list('ka.req.role.rules', 'When the request object refers to a role/cluster role, its rules.'),
  indexed('ka.req.role.rules.apiGroups', 'When the request object refers to a role/cluster role, the API groups of its rules.'),
  indexed('ka.req.role.rules.nonResourceURLs', 'When the request object refers to a role/cluster role, the non-resource URLs of its rules.'),
  indexed('ka.req.role.rules.verbs', 'When the request object refers to a role/cluster role, the verbs of its rules.'),
  indexed('ka.req.role.rules.resources', 'When the request object refers to a role/cluster role, the resources of its rules.'),
  s('ka.req.pod.fs_group', 'When the request object refers to a pod, the fsGroup of the pod security context.'),
  list('ka.req.pod.supplemental_groups', 'When the request object refers to a pod, the supplementalGroups of the pod security context.'),
  s('ka.req.service.type', 'When the request object refers to a service, the service type.'),
  indexed('ka.req.service.ports', "When the request object refers to a service, the service's ports."),
  indexed('ka.req.pod.volumes.hostpath', 'When the request object refers to a pod, the hostPath paths of all volumes.'),
  keyed('ka.req.volume.hostpath', 'Deprecated by ka.req.pod.volumes.hostpath: "true" if a volume uses the (host) path, a trailing * makes it a prefix.'),
  indexed('ka.req.pod.volumes.flexvolume_driver', 'When the request object refers to a pod, the flexVolume drivers of all volumes.'),
  indexed('ka.req.pod.volumes.volume_type', 'When the request object refers to a pod, the volume types of all volumes.'),
  s('ka.resp.name', 'The response object name.'),
  s('ka.response.code', 'The response code.'),
  s('ka.response.reason', 'The response reason (usually present only for failures).'),
  s('ka.useragent', 'The user agent of the client that made the request.'),
  indexed('ka.sourceips', 'The IP addresses of the client that made the request.'),
  s('ka.cluster.name', 'The name of the cluster (set by cloud variants of the plugin; never extracted here).'),
  ...containerListFields('initContainers'),
  ...containerListFields('ephemeralContainers'),
];

const j = fieldMaker('k8s_audit', 'json plugin');
const POINTER = { arg: 'required', argKind: 'key' } as const;

/** The json plugin's fields and their jevt.* aliases. */
export const JSON_FIELDS: readonly FieldDef[] = [
  j('json.value', 'PT_CHARBUF', 'A value of the JSON event at a JSON pointer (RFC 6901): json.value[/stage].', POINTER),
  j('json.obj', 'PT_CHARBUF', 'The full JSON event as indented text.'),
  j('json.rawtime', 'PT_CHARBUF', 'The event time in nanoseconds from epoch, as decimal text.'),
  j('jevt.value', 'PT_CHARBUF', 'Alias for json.value, provided for backwards compatibility.', POINTER),
  j('jevt.obj', 'PT_CHARBUF', 'Alias for json.obj, provided for backwards compatibility.'),
  j('jevt.rawtime', 'PT_CHARBUF', 'Alias for json.rawtime, provided for backwards compatibility.'),
];
