// The dashboards against a real Prometheus (Debian's package) scraping a real `rae run` under
// load: the engine runs with its kernel source (as root; the source is optional, so a host
// without the probe still runs the rest), its audit webhook and its forwarder; the test posts the
// audit corpus to the webhook with the generated client certificate and /test alerts to the
// forwarder, while Prometheus scrapes GET /metrics every second with the shipped scrape
// configuration and evaluates the PrometheusRule's groups. Then every panel query of
// deploy/prometheus-operator/runtime-audit-engine-dashboard.json, its Grafana variables
// substituted, must run without error, and return data unless the panel is listed in
// FAULT_ONLY (series that exist only once a fault happened: drops, rejected rulesets...). In the
// same run, every panel query of Falco's own dashboard (read from ../shared/dashboards, never
// copied here) must return data from Falco's names that the engine serves, and return none for
// the names docs/metrics.md lists as not served, a list that must name exactly the dashboard's
// names that are not served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { K8SAUDIT_SAMPLES } from '../../support/corpus.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';
import { findTool, freePort, MANIFESTS, PROMETHEUS_OPERATOR, prometheusRuleGroups, startPrometheus, type RunningPrometheus } from './prom-tools.js';

const prometheus = findTool('prometheus');
const WAIT_MS = 600_000;
/** Falco's Grafana dashboard, upstream data beside the repository (../shared/dashboards/SOURCES.md). */
const FALCO_DASHBOARD = join(import.meta.dirname, '..', '..', '..', 'shared', 'dashboards', 'falco-dashboard.json');
/** docs/metrics.md, whose marked table lists the names of Falco's dashboard that are not served. */
const METRICS_DOC = join(import.meta.dirname, '..', '..', 'docs', 'metrics.md');
/** Panels of our dashboard whose series exist only after a fault; their queries must still run. */
const FAULT_ONLY = new Set(['Events dropped by reason', 'Sources unavailable', 'Events judged by the reference interpreter', 'Rulesets rejected in range by reason', 'Retries and refusals by output', 'Label values counted as (other)']);

type Panel = { title: string; type: string; targets?: Array<{ expr: string }>; panels?: Panel[] };

/** Every panel query of a Grafana dashboard (rows' nested panels included), with its panel's title. */
function panelQueries(file: string): Array<{ title: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: Panel[] };
  const walk = (ps: Panel[]): Array<{ title: string; expr: string }> => ps.flatMap((p) => [...(p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })), ...walk(p.panels ?? [])]);
  return walk(dashboard.panels);
}

/** Grafana's variables as this test's Prometheus needs them: every node (pod, source...), windows over the test's span. */
function substitute(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$__interval/g, '1m')
    .replace(/\$__range/g, '1h')
    .replace(/\$\{?(node|namespace|pod|source|priority)\}?/g, '.*');
}

/** Falco's dashboard's panel queries, or a clear error when the shared upstream data is absent. */
function falcoPanelQueries(): Array<{ title: string; expr: string }> {
  if (!existsSync(FALCO_DASHBOARD)) throw new Error(`${FALCO_DASHBOARD} is missing: this test reads Falco's Grafana dashboard from the shared upstream data (../shared/dashboards)`);
  return panelQueries(FALCO_DASHBOARD);
}

/** The metric names of Falco's dashboard that docs/metrics.md lists as not served (its marked table). */
function notServed(): string[] {
  const text = readFileSync(METRICS_DOC, 'utf8');
  const at = text.indexOf('<!-- falco-dashboard-not-served');
  if (at < 0) throw new Error(`${METRICS_DOC}: the falco-dashboard-not-served table is missing`);
  const rows = text.slice(at).split('\n').slice(3);
  return rows
    .slice(
      0,
      rows.findIndex((l) => !l.startsWith('|')),
    )
    .map((l) => /^\| `([a-z0-9_]+)` \|/.exec(l)?.[1] ?? `unreadable row: ${l}`);
}

/** The falcosecurity_* metric names a query reads. */
const falcoNames = (expr: string) => [...new Set(expr.match(/falcosecurity_[a-z0-9_]+/g) ?? [])];

test("Falco's dashboard: its queries are found, the variables substituted, and the names not served are the docs' list exactly", () => {
  const qs = falcoPanelQueries();
  assert.is(qs.length, 31);
  for (const q of qs) assert.not.match(substitute(q.expr), /\$/, q.title);
  const listed = notServed();
  assert.equal(listed, [...new Set(listed)], 'a name listed twice');
  const used = new Set(qs.flatMap((q) => falcoNames(q.expr)));
  for (const name of listed) assert.ok(used.has(name), `docs/metrics.md lists ${name}, which Falco's dashboard does not query`);
});

test('panel queries are found, and the variables substituted', () => {
  const qs = panelQueries(join(PROMETHEUS_OPERATOR, 'runtime-audit-engine-dashboard.json'));
  assert.ok(qs.length >= 25, `${qs.length} queries`);
  for (const q of qs) assert.not.match(substitute(q.expr), /\$/, q.title);
  for (const title of FAULT_ONLY)
    assert.ok(
      qs.some((q) => q.title === title),
      `FAULT_ONLY names no panel: ${title}`,
    );
});

const t = prometheus ? test : test.skip;

t('every panel query of our dashboard has data from a real engine under load', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-dashboards-'));
  let rae: RaeRun | undefined;
  let prom: RunningPrometheus | undefined;
  try {
    const [fwdPort, hookPort] = [await freePort(), await freePort()];
    const cfg = join(dir, 'run.yaml');
    writeFileSync(
      cfg,
      `hostname: dash-node\nrules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: ${fwdPort}\napi:\n  enabled: false\nwebhook:\n  port: ${hookPort}\ncontainers:\n  enabled: false\ndns:\n  enabled: false\nsyscall:\n  optional: true\n`,
    );
    const stateDir = join(dir, 'state');
    const wc = spawnSync(process.execPath, ['bin/rae.js', 'webhook-config', '--config', cfg, '--state-dir', stateDir], { encoding: 'utf8' });
    assert.is(wc.status, 0, wc.stderr);
    rae = startRae(['--config', cfg, '--state-dir', stateDir]);
    await rae.waitLog(/\bready\b/, 0, WAIT_MS);

    // Prometheus with the shipped scrape configuration (this engine as target, 1 s interval) and the PrometheusRule's groups.
    const shipped = parseYaml(readFileSync(join(MANIFESTS, 'prometheus-scrape-config.yaml'), 'utf8')) as {
      scrape_configs: Array<{ scrape_interval: string; static_configs: Array<{ targets: string[]; labels: Record<string, string> }> }>;
    };
    const job = shipped.scrape_configs[0]!;
    job.scrape_interval = '1s';
    job.static_configs[0]!.targets = [`127.0.0.1:${fwdPort}`];
    job.static_configs[0]!.labels.node = 'dash-node';
    writeFileSync(join(dir, 'rules.yaml'), JSON.stringify({ groups: prometheusRuleGroups() }));
    prom = await startPrometheus(prometheus as string, dir, { global: { scrape_interval: '1s', evaluation_interval: '1s' }, rule_files: ['rules.yaml'], ...shipped });

    // Load: the audit corpus through the webhook (mTLS with the generated client certificate), and /test alerts.
    const tls = join(stateDir, 'webhook-tls');
    const agent = new Agent({ connect: { ca: readFileSync(join(tls, 'ca.crt')), cert: readFileSync(join(tls, 'client.crt')), key: readFileSync(join(tls, 'client.key')) } });
    const items = readdirSync(K8SAUDIT_SAMPLES)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => {
        const text = readFileSync(join(K8SAUDIT_SAMPLES, f), 'utf8');
        try {
          return [JSON.parse(text) as unknown];
        } catch {
          return text
            .split('\n')
            .filter((l) => l.trim())
            .map((l) => JSON.parse(l) as unknown);
        }
      });
    const list = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items });
    for (let i = 0; i < 5; i++) {
      const res = await request(`https://127.0.0.1:${hookPort}/orchestrator-audit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: list, dispatcher: agent });
      assert.is(res.statusCode, 200, await res.body.text());
      const posted = await request(`http://127.0.0.1:${fwdPort}/test`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      assert.is(posted.statusCode, 200);
      await posted.body.dump();
    }
    await agent.close();
    await rae.waitAlerts((a) => a.filter((x) => x.source === 'k8s_audit').length >= 20, 'audit alerts', WAIT_MS);

    // Wait until the scrapes hold the load: 5 samples of the audit detections within the panels' 1m windows.
    await prom.poll(
      'scraped audit detections',
      async () => {
        const r = await prom!.query('count_over_time(enginesecurity_enginesidekick_engine_events_total{source="k8s_audit"}[1m]) >= 5');
        return r.result.length > 0 ? true : undefined;
      },
      WAIT_MS,
    );

    const failures: string[] = [];
    for (const q of panelQueries(join(PROMETHEUS_OPERATOR, 'runtime-audit-engine-dashboard.json'))) {
      const r = await prom.query(substitute(q.expr));
      if (r.status !== 'success') failures.push(`${q.title}: ${r.status} ${r.error}`);
      else if (r.result.length === 0 && !FAULT_ONLY.has(q.title)) failures.push(`${q.title}: no data for ${substitute(q.expr)}`);
    }
    // Falco's dashboard: data for every query of a served name, none for the names listed as not served.
    const listed = new Set(notServed());
    for (const q of falcoPanelQueries()) {
      const r = await prom.query(substitute(q.expr));
      const names = falcoNames(q.expr);
      const served = names.every((n) => !listed.has(n));
      if (r.status !== 'success') failures.push(`Falco: ${q.title}: ${r.status} ${r.error}`);
      else if (served && r.result.length === 0) failures.push(`Falco: ${q.title}: no data for ${substitute(q.expr)}`);
      else if (!served && r.result.length > 0) failures.push(`Falco: ${q.title}: data for ${names.join(', ')}, listed as not served in docs/metrics.md`);
    }
    assert.equal(failures, []);
    // Falco's names count what the engine's own names count (same scrape, same state).
    for (const [falco, ours] of [
      ['sum(falcosecurity_falco_rules_matches_total)', 'sum(enginesecurity_enginesidekick_engine_events_total{source="k8s_audit"})'],
      ['sum(falcosecurity_scap_n_evts_total)', 'sum(enginesecurity_engine_events_received_total)'],
      ['sum(falcosecurity_scap_n_drops_full_threadtable_total)', 'sum(enginesecurity_engine_thread_table_drops_total{reason="full"})'],
    ]) {
      const r = await prom.query(`${falco} - ${ours}`);
      assert.equal(
        r.result.map((x) => x.value[1]),
        ['0'],
        `${falco} - ${ours}`,
      );
    }
    // The check can fail: a misspelt metric has no data.
    assert.equal((await prom.query('enginesecurity_engine_events_recieved_total')).result, []);

    // The PrometheusRule's groups are loaded and evaluate without error against these series.
    const health = await prom.poll('evaluated rules', async () => {
      const r = await prom!.get('/api/v1/rules');
      const rules = ((r.body as { data?: { groups?: Array<{ rules: Array<{ name: string; health: string }> }> } })?.data?.groups ?? []).flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((x) => x.health !== 'unknown') ? rules : undefined;
    });
    assert.equal(
      health.filter((x) => x.health !== 'ok'),
      [],
    );
    assert.is(health.length, 7);
  } finally {
    await prom?.stop();
    if (rae) await rae.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
