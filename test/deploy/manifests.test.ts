// deploy/ validated without a cluster. Every object of every YAML file and of every rendered
// kustomization (base, privileged, deckhouse, event-generator, and a site overlay written by
// configure.sh) is checked against Kubernetes' OpenAPI schemas (kubernetes-models' validate()),
// custom resources against the CRDs (ajv) and the engine's own reader, and the configuration the
// pods mount against the engine's configuration loader. Then what the schemas cannot see: labels
// that select, names that refer, ports and paths that must meet, and the DaemonSet's privileges.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { configFromYaml, defaultConfig } from '../../host/config/config.js';
import { readManifests } from '../../host/resources/manifests.js';
import { DEPLOY, crdValidators, loadCrds } from '../helpers/crd.js';
import { podOf, selectorOf, serviceSpecOf, type K8sObject as Obj } from '../../support/k8s-objects.js';

const NAMESPACE = `${defaultConfig({}).webhook.sysPrefix}-runtime-audit-engine`;
const CUSTOM = new Set(['EngineAuditRules', 'ModuleConfig']);
/** Deckhouse kinds without a published schema here; the observability groups are checked by promtool (test/metrics). */
const DECKHOUSE_ONLY = new Set(['ClusterLoggingConfig', 'ClusterObservabilityMetricsRulesGroup', 'ObservabilityMetricsRulesGroup']);
/** Prometheus Operator kinds: the PrometheusRule is checked by promtool (test/metrics), the ServiceMonitor's port below. */
const PROMETHEUS_OPERATOR_KINDS = new Set(['PrometheusRule', 'ServiceMonitor']);
const validators = crdValidators(loadCrds());

function parseObjects(text: string, where: string): Obj[] {
  return parseAllDocuments(text).flatMap((d) => {
    assert.equal(d.errors, [], `${where}: ${d.errors.join('; ')}`);
    const o = d.toJS() as Obj | null;
    return o ? [o] : [];
  });
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'site' ? [] : yamlFiles(p);
    return f.endsWith('.yaml') ? [p] : [];
  });
}

const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
if (!kubectl) process.stderr.write('\n*** SKIPPED: rendering the kustomizations needs kubectl (its built-in kustomize) ***\n');
const withKubectl = kubectl ? test : test.skip;

function render(dir: string): Obj[] {
  const r = spawnSync(kubectl!, ['kustomize', dir], { encoding: 'utf8' });
  assert.is(r.status, 0, `kubectl kustomize ${dir}: ${r.stderr}`);
  return parseObjects(r.stdout, dir);
}

/** kubernetes-models' module for an apiVersion (core: v1). */
async function modelsOf(apiVersion: string): Promise<Record<string, new (o: unknown) => { validate(): void }>> {
  return (await import(`kubernetes-models/${apiVersion}`)) as Record<string, new (o: unknown) => { validate(): void }>;
}

/** Every problem of one object: OpenAPI for built-in kinds, CRD and engine for the custom ones. */
async function problems(o: Obj, where: string): Promise<string[]> {
  if (o.kind === 'Kustomization') return [];
  if (CUSTOM.has(o.kind)) {
    const out = validators.get(o.kind)!(o).map((e) => `${where}: ${o.kind}/${o.metadata.name}: ${e.instancePath} ${e.message}`);
    const read = readManifests(where, JSON.stringify(o), o.apiVersion.split('/')[0]!);
    return [...out, ...read.diagnostics.map((d) => `${where}: engine: ${d.message}`)];
  }
  if (DECKHOUSE_ONLY.has(o.kind) || PROMETHEUS_OPERATOR_KINDS.has(o.kind)) return [];
  const Model = (await modelsOf(o.apiVersion).catch(() => ({}) as Record<string, never>))[o.kind];
  if (!Model) return [`${where}: ${o.apiVersion} ${o.kind} has no schema in kubernetes-models`];
  // kustomize wraps a Secret's base64 over lines; the API server decodes it so (Go's base64 skips
  // newlines), kubernetes-models' "byte" format does not.
  const obj = o.kind === 'Secret' && o.data ? { ...o, data: Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, v.replace(/\n/g, '')])) } : o;
  try {
    new Model(obj).validate();
    return [];
  } catch (err) {
    return [`${where}: ${o.kind}/${o.metadata?.name}: ${(err as Error).message}`];
  }
}

test('every object of every file in deploy/ and rules/manifests/ is valid', async () => {
  const files = [...yamlFiles(DEPLOY), ...yamlFiles(join(DEPLOY, '..', 'rules', 'manifests')).filter((f) => !f.endsWith('prometheus-scrape-config.yaml'))];
  const found: string[] = [];
  let checked = 0;
  for (const f of files) {
    for (const o of parseObjects(readFileSync(f, 'utf8'), f)) {
      found.push(...(await problems(o, relative(DEPLOY, f))));
      checked++;
    }
  }
  assert.equal(found, []);
  assert.ok(checked >= 25, `only ${checked} objects`);
});

test('an invalid object is caught by each validator', async () => {
  const ds = parseObjects(readFileSync(join(DEPLOY, 'base', 'daemonset.yaml'), 'utf8'), 'daemonset')[0]!;
  // a name where the schema wants a number
  Object.assign(podOf(ds).spec.containers[0]!.ports![0]!, { containerPort: 'forwarder' });
  assert.match((await problems(ds, 'ds')).join('\n'), /containerPort must be integer/);
  const rules = parseObjects(readFileSync(join(DEPLOY, 'base', 'resources', 'engine-audit-rules.yaml'), 'utf8'), 'rules')[0]!;
  (rules.spec as { rules: Array<{ rule: { priority: string } }> }).rules[2]!.rule.priority = 'CRITICAL';
  const p = await problems(rules, 'rules');
  assert.ok(p.some((x) => /must be equal to one of the allowed values/.test(x)) && p.some((x) => /engine: .*did you mean Critical/.test(x)), p.join('\n'));
  assert.match((await problems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, 'w')).join(''), /no schema/);
});

let siteDir: string | undefined;
test.after(() => {
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

/** The site overlay configure.sh writes, rendered (the complete install). */
function site(): Obj[] {
  siteDir ??= mkdtempSync(join(tmpdir(), 'rae-deploy-site-'));
  const r = spawnSync('bash', [join(DEPLOY, 'configure.sh'), 'registry.example:5000/security/runtime-audit-engine:9.9.9', '--out', join(siteDir, 'site')], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  return render(join(siteDir, 'site'));
}

withKubectl('every kustomization renders to valid objects, all in the namespace', async () => {
  const renders: Array<[string, Obj[]]> = [
    ['base', render(join(DEPLOY, 'base'))],
    ['privileged', render(join(DEPLOY, 'privileged'))],
    ['deckhouse', render(join(DEPLOY, 'deckhouse'))],
    ['event-generator', render(join(DEPLOY, 'event-generator'))],
    ['prometheus-operator', render(join(DEPLOY, 'prometheus-operator'))],
    ['site', site()],
  ];
  const found: string[] = [];
  for (const [name, objs] of renders) {
    for (const o of objs) {
      found.push(...(await problems(o, name)));
      const clusterScoped = ['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'ClusterLoggingConfig', 'ClusterObservabilityMetricsRulesGroup'].includes(o.kind);
      if (!clusterScoped && o.metadata.namespace !== NAMESPACE) found.push(`${name}: ${o.kind}/${o.metadata.name} in namespace ${o.metadata.namespace}`);
    }
  }
  assert.equal(found, []);
  const kinds = (objs: Obj[]) => objs.map((o) => o.kind);
  assert.not.ok(kinds(renders[2]![1]).includes('CustomResourceDefinition') && renders[2]![1].some((o) => o.metadata.name === 'moduleconfigs.deckhouse.io'), 'deckhouse/ leaves the ModuleConfig CRD out');
  assert.ok(kinds(renders[2]![1]).includes('ClusterLoggingConfig'));
  // Deckhouse writes a ModuleConfig's status: there the engines neither do nor may.
  const engineArgs = (objs: Obj[]) => podOf(find(objs, 'DaemonSet', 'runtime-audit-engine')).spec.containers[0]!.args ?? [];
  assert.ok(engineArgs(renders[2]![1]).join(' ').endsWith('-o resources.moduleConfigStatus=false'), engineArgs(renders[2]![1]).join(' '));
  assert.not.ok(engineArgs(renders[0]![1]).join(' ').includes('moduleConfigStatus'));
  const statusResources = (objs: Obj[]) => (find(objs, 'ClusterRole', 'd8:runtime-audit-engine:engine') as Obj & { rules: Array<{ resources: string[] }> }).rules.flatMap((r) => r.resources).filter((r) => r.endsWith('/status'));
  assert.equal(statusResources(renders[0]![1]), ['engineauditrules/status', 'namespacedengineauditrules/status', 'moduleconfigs/status']);
  assert.equal(statusResources(renders[2]![1]), ['engineauditrules/status', 'namespacedengineauditrules/status']);
});

withKubectl('prometheus-operator: the ServiceMonitor selects the forwarder Service by a port it names', () => {
  const objs = render(join(DEPLOY, 'prometheus-operator'));
  const sm = find(objs, 'ServiceMonitor', 'runtime-audit-engine') as Obj & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; path: string }> } };
  const selected = objs.filter((o) => o.kind === 'Service' && Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v));
  const [endpoint] = sm.spec.endpoints;
  const serving = selected.filter((svc) => (serviceSpecOf(svc).ports ?? []).some((p) => p.name === endpoint!.port));
  assert.equal(
    serving.map((svc) => svc.metadata.name),
    ['runtime-audit-engine-forwarder'],
  );
  assert.is(endpoint!.path, '/metrics');
  assert.ok(objs.some((o) => o.kind === 'PrometheusRule'));
  const dashboard = find(objs, 'ConfigMap', 'runtime-audit-engine-dashboard');
  assert.is(dashboard.metadata.labels?.grafana_dashboard, '1');
});

const find = (objs: Obj[], kind: string, name: string): Obj => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} is not in the render`);
  return o!;
};

/** Problems of references inside one render: selectors, volumes, config, secrets, ports, accounts. */
function referenceProblems(objs: Obj[]): string[] {
  const out: string[] = [];
  const objectNamed = (kind: string, name: string | undefined) => objs.find((o) => o.kind === kind && o.metadata.name === name);
  const has = (kind: string, name: string | undefined) => objectNamed(kind, name) !== undefined;
  const workloads = objs.filter((o) => ['DaemonSet', 'Deployment', 'Job', 'Pod'].includes(o.kind));
  for (const w of workloads) {
    const id = `${w.kind}/${w.metadata.name}`;
    const pod = podOf(w);
    for (const [k, v] of Object.entries(selectorOf(w)?.matchLabels ?? {})) if (pod.labels[k] !== v) out.push(`${id}: selector ${k}=${v} does not match its template`);
    if (pod.spec.serviceAccountName && !has('ServiceAccount', pod.spec.serviceAccountName)) out.push(`${id}: no ServiceAccount ${pod.spec.serviceAccountName}`);
    const volumes = new Map((pod.spec.volumes ?? []).map((v) => [v.name, v]));
    for (const v of volumes.values()) {
      if (v.configMap && !has('ConfigMap', v.configMap.name)) out.push(`${id}: volume ${v.name}: no ConfigMap ${v.configMap.name}`);
      if (v.secret && !has('Secret', v.secret.secretName)) out.push(`${id}: volume ${v.name}: no Secret ${v.secret.secretName}`);
    }
    for (const c of pod.spec.containers) {
      for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) out.push(`${id}: mount ${m.name} has no volume`);
      /** A file the container is given must be a key its ConfigMap or Secret mount projects there. */
      const checkFile = (path: string, what: string) => {
        const mount = (c.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath}/`));
        const v = mount && volumes.get(mount.name);
        const source = v?.configMap ? objectNamed('ConfigMap', v.configMap.name) : v?.secret ? objectNamed('Secret', v.secret.secretName) : undefined;
        if (!mount || !v || !source) return; // a hostPath or emptyDir: the node's, not the manifests'
        const rel = path.slice(mount.mountPath.length + 1);
        const items = (v.configMap ?? v.secret)?.items;
        const key = items ? items.find((i) => i.path === rel)?.key : rel;
        if (key === undefined || !(key in { ...(source.data ?? {}), ...(source.stringData ?? {}) })) out.push(`${id}: ${what} ${path}: not projected by volume ${mount.name}`);
      };
      for (const a of c.args ?? []) if (a.startsWith('/')) checkFile(a, 'argument');
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) {
          const s = objs.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
          if (!s || !(ref.key in { ...(s.data ?? {}), ...(s.stringData ?? {}) })) out.push(`${id}: env ${e.name}: no key ${ref.key} in Secret ${ref.name}`);
        }
      }
      const portNames = new Set((c.ports ?? []).map((p) => p.name));
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
        const port = c[probe]?.httpGet?.port;
        if (typeof port === 'string' && !portNames.has(port)) out.push(`${id}: ${probe} port ${port} is not a container port`);
      }
      // The engine's configuration file the container is given must load without a problem.
      const at = (c.args ?? []).indexOf('--config');
      if (at >= 0) {
        const path = c.args![at + 1] ?? '';
        const mount = (c.volumeMounts ?? []).find((m) => path.startsWith(`${m.mountPath}/`));
        const configMap = mount && volumes.get(mount.name)?.configMap;
        const cm = configMap && objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMap.name);
        const text = mount && cm ? cm.data?.[path.slice(mount.mountPath.length + 1)] : undefined;
        if (text === undefined) out.push(`${id}: --config ${path} is not in a mounted ConfigMap`);
        else {
          const loaded = configFromYaml(text, {});
          for (const p of loaded.problems) out.push(`${id}: ${path}: ${p.key}: ${p.message}`);
          for (const [k, v] of Object.entries(loaded.config.webhook)) if (k.endsWith('File') && v !== '') checkFile(v as string, `webhook.${k}`);
        }
      }
    }
  }
  for (const s of objs.filter((o) => o.kind === 'Service')) {
    const spec = serviceSpecOf(s);
    const targets = workloads.filter((w) => Object.entries(spec.selector ?? {}).every(([k, v]) => podOf(w).labels[k] === v) && w.kind !== 'Pod' && w.kind !== 'Job');
    if (targets.length === 0) out.push(`Service/${s.metadata.name} selects no workload`);
    for (const p of spec.ports ?? []) {
      if (typeof p.targetPort === 'string' && !targets.every((w) => podOf(w).spec.containers.some((c) => (c.ports ?? []).some((cp) => cp.name === p.targetPort)))) {
        out.push(`Service/${s.metadata.name}: targetPort ${p.targetPort} is not a port of every selected pod`);
      }
    }
  }
  return out;
}

withKubectl('the complete install: every reference meets its object', () => {
  assert.equal(referenceProblems(site()), []);
});

withKubectl('the reference check finds a broken reference', () => {
  const objs = site();
  const ds = find(objs, 'DaemonSet', 'runtime-audit-engine');
  const dsPod = podOf(ds).spec;
  dsPod.volumes = dsPod.volumes?.filter((v) => v.name !== 'resources');
  find(objs, 'ConfigMap', 'runtime-audit-engine-config').data!['config.yaml'] += 'logLevl: debug\n';
  const tlsVolume = dsPod.volumes?.find((v) => v.name === 'webhook-tls')?.secret;
  tlsVolume!.items = tlsVolume!.items?.filter((i) => i.key !== 'tls.key');
  const generator = { ...find(render(join(DEPLOY, 'event-generator')), 'Pod', 'runtime-audit-engine-event-generator'), metadata: { name: 'generator', namespace: NAMESPACE } };
  const genVolume = podOf(generator).spec.volumes?.[0]?.secret;
  genVolume!.items = genVolume!.items?.filter((i) => i.key !== 'client.key');
  assert.equal(referenceProblems([...objs, generator]).sort(), [
    'DaemonSet/runtime-audit-engine: /etc/runtime-audit-engine/config/config.yaml: logLevl: unknown key',
    'DaemonSet/runtime-audit-engine: mount resources has no volume',
    'DaemonSet/runtime-audit-engine: webhook.tlsKeyFile /etc/runtime-audit-engine/webhook-tls/tls.key: not projected by volume webhook-tls',
    'Pod/generator: argument /etc/runtime-audit-engine/webhook-tls/client.key: not projected by volume webhook-client',
  ]);
});

withKubectl('the engine pods: least privilege, host mounts, probes, and what they read', () => {
  const objs = site();
  const ds = find(objs, 'DaemonSet', 'runtime-audit-engine');
  const pod = podOf(ds).spec;
  const c = pod.containers[0]!;
  assert.is(pod.hostPID, true);
  assert.is(c.securityContext?.privileged, false);
  assert.equal(c.securityContext?.capabilities, { drop: ['ALL'], add: ['BPF', 'PERFMON', 'SYS_RESOURCE', 'SYS_PTRACE'] });
  const hostPaths = (pod.volumes ?? []).flatMap((v) => (v.hostPath ? [v.hostPath.path] : []));
  for (const p of ['/sys/kernel/btf', '/proc', '/etc', '/run/containerd/containerd.sock', '/run/crio/crio.sock', '/var/run/docker.sock']) assert.ok(hostPaths.includes(p), p);
  assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory && c.resources.limits?.memory);
  assert.is(c.livenessProbe?.httpGet?.path, '/healthz');
  assert.is(c.readinessProbe?.httpGet?.path, '/readyz');
  assert.is(c.image, 'registry.example:5000/security/runtime-audit-engine:9.9.9');
  // The configuration it mounts points at what is mounted: the resources ConfigMap, the TLS Secret.
  const config = configFromYaml(find(objs, 'ConfigMap', 'runtime-audit-engine-config').data!['config.yaml']!, {}).config;
  const mounts = new Map((c.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
  assert.is(mounts.get(config.resources.dir), 'resources');
  for (const f of [config.webhook.tlsCertFile, config.webhook.tlsKeyFile, config.webhook.tlsCaFile]) assert.is(mounts.get(f.slice(0, f.lastIndexOf('/'))), 'webhook-tls', f);
  const secret = find(objs, 'Secret', 'runtime-audit-engine-webhook-tls');
  assert.is(secret.type, 'kubernetes.io/tls');
  assert.equal(Object.keys(secret.data ?? {}).sort(), ['ca.crt', 'client.crt', 'client.key', 'tls.crt', 'tls.key']);
  // Every file of the resources ConfigMap is a manifest the engine accepts.
  const resources = find(objs, 'ConfigMap', 'runtime-audit-engine-resources');
  for (const [file, text] of Object.entries(resources.data ?? {})) assert.equal(readManifests(file, text, config.resources.apiGroup).diagnostics, [], file);
  // Services: the ports the engine listens on, Prometheus annotations on the forwarder.
  assert.is(serviceSpecOf(find(objs, 'Service', 'runtime-audit-engine-webhook')).ports?.[0]?.port, config.webhook.port);
  const fwd = find(objs, 'Service', 'runtime-audit-engine-forwarder');
  assert.is(serviceSpecOf(fwd).ports?.[0]?.port, config.forwarder.port);
  assert.is(fwd.metadata.annotations!['prometheus.io/scrape'], 'true');
  assert.is(Number(fwd.metadata.annotations!['prometheus.io/port']), config.forwarder.port);
  // The privileged fallback changes only the security context.
  const priv = find(render(join(DEPLOY, 'privileged')), 'DaemonSet', 'runtime-audit-engine');
  assert.is(podOf(priv).spec.containers[0]!.securityContext?.privileged, true);
});

withKubectl("the fleet: every node's engine posts its alerts to the fleet forwarder's Service, whose rae forwarder stores them in the API's database", () => {
  const objs = site();
  const configOf = (name: string) => {
    const loaded = configFromYaml(find(objs, 'ConfigMap', name).data!['config.yaml']!, {});
    assert.equal(loaded.problems, [], name);
    return loaded.config;
  };
  const engine = configOf('runtime-audit-engine-config');
  const fleet = configOf('runtime-audit-engine-fleet-forwarder-config');
  // the engines' webhook output names the Service, on a port whose target is the port rae forwarder listens on
  const url = new URL((engine.forwarder.outputs.webhook as { address: string }).address);
  const svc = find(objs, 'Service', 'runtime-audit-engine-fleet-forwarder');
  assert.is(url.hostname, `${svc.metadata.name}.${NAMESPACE}.svc`);
  assert.is(url.pathname, '/');
  const svcPort = serviceSpecOf(svc).ports?.find((p) => p.port === Number(url.port));
  assert.ok(svcPort, `no port ${url.port} on Service ${svc.metadata.name}`);
  const container = podOf(find(objs, 'Deployment', 'runtime-audit-engine-fleet-forwarder')).spec.containers[0]!;
  assert.is(container.args?.[0], 'forwarder');
  const portNamed = (name: unknown) => container.ports?.find((p) => p.name === name)?.containerPort;
  assert.is(portNamed(svcPort!.targetPort), fleet.forwarder.port);
  assert.is(portNamed(serviceSpecOf(svc).ports?.find((p) => p.name === 'api')?.targetPort), fleet.api.port);
  assert.is(fleet.forwarder.address, '0.0.0.0');
  assert.is(fleet.api.address, '0.0.0.0');
  assert.is((fleet.forwarder.outputs.webhook as { address?: string } | undefined)?.address ?? '', '', 'the fleet forwarder does not post to itself');
  // one database: the API's Secret; the engines keep none (their alerts are stored by the fleet forwarder)
  const databaseOf = (c: typeof container) => c.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef;
  const api = podOf(find(objs, 'Deployment', 'runtime-audit-engine-api')).spec.containers[0]!;
  assert.ok(databaseOf(container));
  assert.equal(databaseOf(container), databaseOf(api));
  assert.is(engine.api.enabled, false);
});

withKubectl('the event generator runs the image with `event-generator run` against the webhook Service with its CA', () => {
  const objs = render(join(DEPLOY, 'event-generator'));
  const tls = find(site(), 'Secret', 'runtime-audit-engine-webhook-tls');
  for (const kind of ['Pod', 'Job']) {
    const o = find(objs, kind, 'runtime-audit-engine-event-generator');
    const spec = podOf(o).spec;
    const args = spec.containers[0]!.args ?? [];
    assert.equal(args.slice(0, 2), ['event-generator', 'run']);
    assert.match(args[args.indexOf('--webhook-url') + 1]!, new RegExp(`^https://runtime-audit-engine-webhook\\.${NAMESPACE}\\.svc:9765/orchestrator-audit$`));
    assert.is(spec.volumes?.[0]?.secret?.secretName, tls.metadata.name);
  }
  // The certificate names that Service.
  const cert = Buffer.from(tls.data?.['tls.crt'] ?? '', 'base64').toString();
  const r = spawnSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName'], { input: cert, encoding: 'utf8' });
  assert.match(r.stdout, new RegExp(`DNS:runtime-audit-engine-webhook\\.${NAMESPACE}\\.svc\\b`));
});

withKubectl("the cluster's webhook authenticates its clients: one client CA for every node, the client pair in the API server's kubeconfig and the generator's Pod", () => {
  const objs = site();
  const config = configFromYaml(find(objs, 'ConfigMap', 'runtime-audit-engine-config').data!['config.yaml']!, {}).config;
  assert.is(config.webhook.requireClientCert, true, 'clients without the certificate are refused');
  assert.is(config.webhook.clientCaFile, config.webhook.tlsCaFile, "clients are verified with the Secret's CA, the same on every node");
  // The engines get the CA and the server's pair, not the API server's client key.
  const engineTls = podOf(find(objs, 'DaemonSet', 'runtime-audit-engine')).spec.volumes?.find((v) => v.name === 'webhook-tls')?.secret;
  assert.equal(engineTls?.items?.map((i) => i.key).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
  // The generator presents the pair (the reference check sees that its files are projected).
  for (const kind of ['Pod', 'Job']) {
    const args = podOf(find(render(join(DEPLOY, 'event-generator')), kind, 'runtime-audit-engine-event-generator')).spec.containers[0]!.args ?? [];
    assert.is(args[args.indexOf('--cert') + 1], '/etc/runtime-audit-engine/webhook-tls/client.crt', kind);
    assert.is(args[args.indexOf('--key') + 1], '/etc/runtime-audit-engine/webhook-tls/client.key', kind);
  }
  // The Secret's client certificate is the CA's, for client authentication only; the server's is not a client's.
  const secret = find(objs, 'Secret', 'runtime-audit-engine-webhook-tls');
  const files = mkdtempSync(join(tmpdir(), 'rae-deploy-tls-'));
  try {
    for (const k of ['ca.crt', 'client.crt', 'tls.crt']) writeFileSync(join(files, k), Buffer.from(secret.data![k]!.replace(/\n/g, ''), 'base64'));
    const verify = (purpose: string, file: string) => spawnSync('openssl', ['verify', '-CAfile', join(files, 'ca.crt'), '-purpose', purpose, join(files, file)], { encoding: 'utf8' }).status;
    assert.is(verify('sslclient', 'client.crt'), 0);
    assert.is.not(verify('sslserver', 'client.crt'), 0);
    assert.is.not(verify('sslclient', 'tls.crt'), 0);
  } finally {
    rmSync(files, { recursive: true, force: true });
  }
  // rae webhook-config's configuration from configure.sh: the same files, loaded without a problem.
  const wc = configFromYaml(readFileSync(join(siteDir!, 'site', 'webhook-config.yaml'), 'utf8'), {});
  assert.equal(wc.problems, []);
  assert.is(readFileSync(wc.config.webhook.clientCertFile).toString('base64'), secret.data!['client.crt']!.replace(/\n/g, ''));
  assert.is(readFileSync(wc.config.webhook.clientCaFile).toString('base64'), secret.data!['ca.crt']!.replace(/\n/g, ''));
  assert.is(wc.config.webhook.address, `runtime-audit-engine-webhook.${NAMESPACE}.svc`);
});

test.run();
