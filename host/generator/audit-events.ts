// Realistic orchestrator audit events, shaped as the API server's webhook backend sends them
// (audit.k8s.io/v1 Event at level RequestResponse; reference/module-and-forwarder.md §5 and the
// corpus samples): who (user, groups, source IP, user agent), what (verb, request URI, object
// reference), the request and response objects, the response code and the authorizer's
// decision. Consumes a description of one API request; produces one Event object.
import { randomUUID } from 'node:crypto';

/** A cluster administrator in the default allowed_k8s_users list (so only the targeted rule fires). */
const ADMIN = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

export interface ApiRequest {
  verb: 'create' | 'get' | 'list' | 'update' | 'patch' | 'delete';
  /** Plural resource name: pods, clusterroles, ... */
  resource: string;
  /** API group ('' for the core group). */
  group?: string;
  version?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** Query string of the request URI, without '?'. */
  query?: string;
  stage?: 'ResponseComplete' | 'ResponseStarted';
  code?: number;
  user?: { username: string; groups: string[] };
  requestObject?: Record<string, unknown>;
  responseObject?: Record<string, unknown>;
}

/** The request URI of an API request, as the API server logs it. */
function requestUri(r: ApiRequest): string {
  const base = r.group ? `/apis/${r.group}/${r.version ?? 'v1'}` : `/api/${r.version ?? 'v1'}`;
  const ns = r.namespace ? `/namespaces/${r.namespace}` : '';
  // The name is in the path for everything but create (POST to the collection).
  const name = r.name && (r.verb !== 'create' || r.subresource) ? `/${r.name}` : '';
  const sub = r.subresource ? `/${r.subresource}` : '';
  return `${base}${ns}/${r.resource}${name}${sub}${r.query ? `?${r.query}` : ''}`;
}

/** RFC 3339 with microseconds, as the API server writes audit timestamps. */
function micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** One audit Event for the request. */
export function auditEvent(r: ApiRequest, now = new Date()): Record<string, unknown> {
  const code = r.code ?? (r.verb === 'create' ? 201 : 200);
  const objectRef: Record<string, unknown> = { resource: r.resource, apiVersion: r.version ?? 'v1' };
  if (r.namespace) objectRef.namespace = r.namespace;
  if (r.name) objectRef.name = r.name;
  if (r.group) objectRef.apiGroup = r.group;
  if (r.subresource) objectRef.subresource = r.subresource;
  const event: Record<string, unknown> = {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    auditID: randomUUID(),
    stage: r.stage ?? 'ResponseComplete',
    requestURI: requestUri(r),
    verb: r.verb,
    user: r.user ?? ADMIN,
    sourceIPs: ['10.96.0.15'],
    userAgent: 'kubectl/v1.30.2 (linux/amd64) kubernetes/3968350',
    objectRef,
    responseStatus: code < 400 ? { metadata: {}, code } : { metadata: {}, status: 'Failure', reason: code === 404 ? 'NotFound' : 'Forbidden', code },
    requestReceivedTimestamp: micro(new Date(now.getTime() - 12)),
    stageTimestamp: micro(now),
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': r.user?.username === 'system:anonymous' ? 'RBAC: allowed by ClusterRoleBinding "system:public-info-viewer"' : '' },
  };
  if (r.requestObject) event.requestObject = r.requestObject;
  if (r.responseObject) event.responseObject = r.responseObject;
  return event;
}

/** A pod spec with one container; `extra` is merged into the pod spec, `container` into the container. */
export function pod(name: string, namespace: string, extra: Record<string, unknown> = {}, container: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name, namespace, labels: { run: name } },
    spec: {
      containers: [{ name, image: 'nginx:1.27.0', resources: {}, terminationMessagePath: '/dev/termination-log', imagePullPolicy: 'IfNotPresent', ...container }],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      ...extra,
    },
    status: {},
  };
}

/** The API server's answer to a create: the object with server-set metadata. */
export function created(obj: Record<string, unknown>): Record<string, unknown> {
  const meta = (obj.metadata ?? {}) as Record<string, unknown>;
  return { ...obj, metadata: { ...meta, uid: randomUUID(), resourceVersion: '48213', creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') } };
}

/** An RBAC rule list as a Role or ClusterRole carries it. */
export function role(kind: 'Role' | 'ClusterRole', name: string, rules: Array<{ apiGroups?: string[]; resources: string[]; verbs: string[] }>, namespace?: string): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name };
  if (namespace) metadata.namespace = namespace;
  return { kind, apiVersion: 'rbac.authorization.k8s.io/v1', metadata, rules: rules.map((r) => ({ apiGroups: r.apiGroups ?? [''], resources: r.resources, verbs: r.verbs })) };
}
