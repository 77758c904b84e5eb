// ka.* field extraction with the k8saudit plugin's semantics
// (plugins:plugins/k8saudit/pkg/k8saudit/extract.go; reference/falco-language.md E.2): every
// field is missing unless the event has an `auditID` key; scalar fields read one key path and
// turn non-string values into JSON text; list fields give string arrays.
import { asText, getKeys, getPath, isObject, type Json } from './json-value.js';
import { anyContainerPrivileged, arrayAt, containerField, nonEmpty, volumeField, volumeHasHostPath, type ContainerList } from './pod-fields.js';
import { uriParam } from './uri-param.js';

type Value = string | string[] | undefined;

/** Scalar fields: one key path each. */
const SCALAR: Readonly<Record<string, readonly string[]>> = {
  'ka.auditid': ['auditID'],
  'ka.stage': ['stage'],
  'ka.auth.decision': ['annotations', 'authorization.k8s.io/decision'],
  'ka.auth.reason': ['annotations', 'authorization.k8s.io/reason'],
  // Newer plugin fields read the standard annotations of OpenShift, validating admission
  // policies and pod security admission (paths not checked against the plugin source).
  'ka.auth.openshift.decision': ['annotations', 'authentication.openshift.io/decision'],
  'ka.auth.openshift.username': ['annotations', 'authentication.openshift.io/username'],
  'ka.validations.admission.policy.failure': ['annotations', 'validation.policy.admission.k8s.io/validation_failure'],
  'ka.security.pod.violations': ['annotations', 'pod-security.kubernetes.io/audit-violations'],
  'ka.user.name': ['user', 'username'],
  'ka.impuser.name': ['impersonatedUser', 'username'],
  'ka.verb': ['verb'],
  'ka.uri': ['requestURI'],
  'ka.target.name': ['objectRef', 'name'],
  'ka.target.namespace': ['objectRef', 'namespace'],
  'ka.target.resource': ['objectRef', 'resource'],
  'ka.target.subresource': ['objectRef', 'subresource'],
  'ka.req.binding.role': ['requestObject', 'roleRef', 'name'],
  'ka.req.configmap.name': ['objectRef', 'name'],
  'ka.req.configmap.obj': ['requestObject', 'data'],
  'ka.req.pod.host_ipc': ['requestObject', 'spec', 'hostIPC'],
  'ka.req.pod.host_network': ['requestObject', 'spec', 'hostNetwork'],
  'ka.req.container.host_network': ['requestObject', 'spec', 'hostNetwork'],
  'ka.req.pod.host_pid': ['requestObject', 'spec', 'hostPID'],
  'ka.req.pod.run_as_user': ['requestObject', 'spec', 'securityContext', 'runAsUser'],
  'ka.req.pod.run_as_group': ['requestObject', 'spec', 'securityContext', 'runAsGroup'],
  'ka.req.pod.fs_group': ['requestObject', 'spec', 'securityContext', 'fsGroup'],
  'ka.req.service.type': ['requestObject', 'spec', 'type'],
  'ka.resp.name': ['responseObject', 'metadata', 'name'],
  'ka.response.code': ['responseStatus', 'code'],
  'ka.response.reason': ['responseStatus', 'reason'],
  'ka.useragent': ['userAgent'],
};

/** Whole-array list fields (no index): every element as text. */
const LIST: Readonly<Record<string, readonly string[]>> = {
  'ka.user.groups': ['user', 'groups'],
  'ka.req.binding.subjects': ['requestObject', 'subjects'],
  'ka.req.role.rules': ['requestObject', 'rules'],
  'ka.req.pod.supplemental_groups': ['requestObject', 'spec', 'securityContext', 'supplementalGroups'],
};

/** Role-rule list fields: the named array of every rule (or rule [N]), flattened. */
const RULES: Readonly<Record<string, string>> = {
  'ka.req.role.rules.apiGroups': 'apiGroups',
  'ka.req.role.rules.nonResourceURLs': 'nonResourceURLs',
  'ka.req.role.rules.verbs': 'verbs',
  'ka.req.role.rules.resources': 'resources',
};

/** Binding-subject name lists by subject kind. */
const SUBJECTS: Readonly<Record<string, string>> = {
  'ka.req.binding.subjects.user_names': 'User',
  'ka.req.binding.subjects.serviceaccount_names': 'ServiceAccount',
  'ka.req.binding.subjects.serviceaccount_ns_names': 'ServiceAccount',
  'ka.req.binding.subjects.group_names': 'Group',
};

const POD_LIST = /^ka\.req\.pod\.(containers|initContainers|ephemeralContainers)\.(.+)$/;
const VOLUMES = /^ka\.req\.pod\.volumes\.(.+)$/;

/** A list field's argument as an element index (-1: every element). */
export const indexOf = (arg: string | undefined): number => (arg !== undefined && /^[0-9]+$/.test(arg) ? Number(arg) : -1);

/** The key path of a whole-array list field, or undefined. */
export const listPath = (name: string): readonly string[] | undefined => (Object.hasOwn(LIST, name) ? LIST[name] : undefined);
/** The member a role-rule list field flattens, or undefined. */
export const ruleKey = (name: string): string | undefined => (Object.hasOwn(RULES, name) ? RULES[name] : undefined);
/** The subject kind a binding-subject name field keeps, or undefined. */
export const subjectKind = (name: string): string | undefined => (Object.hasOwn(SUBJECTS, name) ? SUBJECTS[name] : undefined);

type Extractor = (root: Record<string, Json>, arg: string | undefined) => Value;

/** The extractor of each field name, resolved once (the name tables and patterns are read once per name). */
const RESOLVED = new Map<string, Extractor>();

function resolve(name: string): Extractor {
  const path = SCALAR[name];
  if (path) {
    return (root) => {
      const v = getKeys(root, path);
      return v === undefined ? undefined : asText(v);
    };
  }
  const listPath = LIST[name];
  if (listPath) {
    return (root) => {
      const v = getKeys(root, listPath);
      return Array.isArray(v) ? nonEmpty(v.map(asText)) : undefined;
    };
  }
  const rulesKey = RULES[name];
  if (rulesKey) return (root, arg) => ruleValues(root, rulesKey, indexOf(arg));
  const kind = SUBJECTS[name];
  if (kind) {
    const withNamespace = name.endsWith('_ns_names');
    return (root) => subjectNames(root, kind, withNamespace);
  }
  const pod = POD_LIST.exec(name);
  if (pod) {
    const list = pod[1] as ContainerList;
    const prop = pod[2]!;
    return (root, arg) => containerField(root, list, prop, indexOf(arg));
  }
  const vol = VOLUMES.exec(name);
  if (vol) {
    const prop = vol[1]!;
    return (root, arg) => volumeField(root, prop, indexOf(arg));
  }
  return (root, arg) => special(root, name, arg);
}

/** The extractor of one ka.* field name, resolved once (no auditID gate: the caller checks it). */
export function kaExtractor(name: string): (root: Record<string, Json>, arg: string | undefined) => Value {
  let f = RESOLVED.get(name);
  if (f === undefined) {
    f = resolve(name);
    if (RESOLVED.size < 4096) RESOLVED.set(name, f);
  }
  return f;
}

/** The key path of a scalar ka.* field (one value read as text), or undefined for any other field. */
export function kaScalarPath(name: string): readonly string[] | undefined {
  return Object.hasOwn(SCALAR, name) ? SCALAR[name] : undefined;
}

/** Every scalar ka.* field's key path. */
export function kaScalarPaths(): readonly (readonly string[])[] {
  return Object.values(SCALAR);
}

/** True when ka.* fields can be read from `root`: the plugin requires an object with an `auditID` key. */
export function hasAuditId(root: Json): root is Record<string, Json> {
  return isObject(root) && Object.hasOwn(root, 'auditID');
}

/** One ka.* field of an audit event JSON; undefined when missing or unknown. */
export function extractKaField(root: Json, name: string, arg: string | undefined): Value {
  return hasAuditId(root) ? kaExtractor(name)(root, arg) : undefined;
}

function special(root: Json, name: string, arg: string | undefined): Value {
  switch (name) {
    case 'ka.uri.param': {
      const uri = getPath(root, 'requestURI');
      return uri === undefined || arg === undefined || arg === '' ? undefined : uriParam(asText(uri), arg);
    }
    case 'ka.req.binding.subject.has_name':
      // Documented as "N/A"; the plugin (like the original implementation) returns "true".
      return arg ? 'true' : undefined;
    case 'ka.req.container.image':
      return containerField(root, 'containers', 'image', 0)?.[0];
    case 'ka.req.container.image.repository':
      return containerField(root, 'containers', 'image.repository', 0)?.[0];
    case 'ka.req.container.privileged':
      return anyContainerPrivileged(root);
    case 'ka.req.volume.hostpath':
      return arg === undefined ? undefined : volumeHasHostPath(root, arg);
    case 'ka.req.service.ports': {
      const ports = arrayAt(root, indexOf(arg), 'requestObject', 'spec', 'ports');
      return ports ? nonEmpty(ports.map(asText)) : undefined;
    }
    case 'ka.sourceips': {
      // The plugin reads requestObject.rules[*].sourceIPs here, so the field is never set
      // (falcosecurity/plugins#236); this reads the event's sourceIPs as documented.
      const ips = arrayAt(root, indexOf(arg), 'sourceIPs');
      return ips ? nonEmpty(ips.map(asText)) : undefined;
    }
    case 'ka.target.pod.name': {
      // The pod a request targets: the object name when the resource is pods.
      const resource = getPath(root, 'objectRef', 'resource');
      const podName = getPath(root, 'objectRef', 'name');
      return resource === 'pods' && podName !== undefined ? asText(podName) : undefined;
    }
    default:
      // ka.cluster.name is set by the cloud variants of the plugin only; unknown names miss too.
      return undefined;
  }
}

function ruleValues(root: Json, key: string, index: number): string[] | undefined {
  const rules = arrayAt(root, index, 'requestObject', 'rules');
  if (!rules) return undefined;
  return nonEmpty(
    rules.flatMap((r) => {
      const v = getPath(r, key);
      return Array.isArray(v) ? v.map(asText) : [];
    }),
  );
}

function subjectNames(root: Json, kind: string, withNamespace: boolean): string[] | undefined {
  const subjects = getPath(root, 'requestObject', 'subjects');
  if (!Array.isArray(subjects)) return undefined;
  return nonEmpty(
    subjects.flatMap((s) => {
      if (getPath(s, 'kind') !== kind) return [];
      const name = getPath(s, 'name');
      if (name === undefined) return [];
      if (!withNamespace) return [asText(name)];
      const ns = getPath(s, 'namespace');
      return [`${ns === undefined ? '' : asText(ns)}:${asText(name)}`];
    }),
  );
}
