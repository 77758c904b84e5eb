// `npm run build` as production runs it: the build goes to a temporary directory, and every
// command runs from there through bin/rae.js (RAE_BUILD), without tsx. Node 20 cannot import a
// .ts file without a loader, so any path the build still points at the sources (a worker entry,
// SQL migrations, the AssemblyScript runtime, the rules) fails the command that takes it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../helpers/rae-run.js';

const tmp = mkdtempSync(join(tmpdir(), 'rae-build-'));
const out = join(tmp, 'dist');
const built = spawnSync(process.execPath, ['scripts/build.mjs', '--out', out], { encoding: 'utf8' });
// every `rae` below (and startRae's) runs the build in `out`
process.env.RAE_BUILD = out;

function rae(args: string[]) {
  return spawnSync(process.execPath, ['bin/rae.js', ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
}

test('build: npm run build writes JavaScript, the runtime sources, rules and migrations', () => {
  assert.is(built.status, 0, built.stdout + built.stderr);
  for (const f of ['host/cli/main.js', 'host/runtime/compile-worker.js', 'build/json-index.wasm', 'host/api/db/migrations/001_init.sql', 'assembly/index.ts', 'rules/syscall/falco_rules.yaml', 'package.json']) {
    assert.ok(existsSync(join(out, f)), f);
  }
  assert.not.ok(existsSync(join(out, 'host/cli/main.ts')));
});

test("build: ships the compiler split (host/runtime/asc-loader.ts), its wasm apart from binaryen's JavaScript", () => {
  const [split, ...more] = readdirSync(join(out, 'compiler-cache'));
  assert.is(more.length, 0, 'one split');
  for (const f of ['asc.js', 'assemblyscript.js', 'binaryen.js', 'binaryen.wasm', 'split.json']) assert.ok(existsSync(join(out, 'compiler-cache', split!, f)), f);
});

/**
 * Starts the built webhook (state in `dir`), decodes a two-event EventList with the built decoder,
 * and prints one JSON line: which EventList walk it uses, the events decoded, and the webhook's log.
 */
const WEBHOOK_LOG = `
const [out, dir] = process.argv.slice(1);
const load = (rel) => import(out + '/host/' + rel);
const { defaultConfig } = await load('config/config.js');
const { createMetrics } = await load('metrics/index.js');
const { ensureWebhookTls, startWebhook } = await load('sources/audit/index.js');
const { decodeAuditEvents, listWalk } = await load('sources/audit/batch-bytes.js');
const { wasmListWalk } = await load('sources/audit/list-walk.js');
const webhook = { ...defaultConfig({}).webhook, address: '127.0.0.1', port: 0 };
const material = ensureWebhookTls({ stateDir: dir, webhook });
if (!material.ok) throw new Error(material.error);
const log = [];
const server = await startWebhook({ webhook, tls: material.tls, evaluate: () => {}, metrics: createMetrics({ processMetrics: false }), log: (m) => log.push(m) });
await server.close();
const body = Buffer.from(JSON.stringify({ kind: 'EventList', items: [{ auditID: 'a' }, { auditID: 'b' }] }));
const decoded = decodeAuditEvents(body, webhook, 'bytes', 1n);
console.log(JSON.stringify({ wasm: wasmListWalk !== undefined && listWalk === wasmListWalk, events: decoded.ok ? decoded.events.length : -1, log }));
`;
const webhookRun = () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', WEBHOOK_LOG, pathToFileURL(out).href, mkdtempSync(join(tmp, 'state-'))], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { wasm: boolean; events: number; log: string[] };
};

test('build: the webhook walks EventLists with the built WebAssembly module, and in JavaScript (logged once) without it', () => {
  const built = webhookRun();
  assert.is(built.wasm, true);
  assert.is(built.events, 2);
  assert.not.ok(
    built.log.some((l) => l.includes('json-index.wasm')),
    built.log.join('\n'),
  );
  rmSync(join(out, 'build/json-index.wasm'));
  try {
    const missing = webhookRun();
    assert.is(missing.wasm, false);
    assert.is(missing.events, 2);
    assert.is(missing.log.filter((l) => l.includes('json-index.wasm') && l.includes('JavaScript')).length, 1, missing.log.join('\n'));
  } finally {
    spawnSync(process.execPath, ['scripts/build-json-index.mjs', join(out, 'build/json-index.wasm')]);
  }
});

for (const cmd of ['run', 'validate', 'describe', 'replay', 'test', 'tune', 'convert', 'event-generator', 'webhook-config', 'admin']) {
  test(`build: rae ${cmd} --help`, () => {
    const r = rae([cmd, '--help']);
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stdout, `Usage: rae ${cmd}`);
  });
}

test('build: rae validate compiles the built-in rules in the compile worker', () => {
  const r = rae(['validate', '-r', 'rules/syscall/falco_rules.yaml']);
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, 'rules/syscall/falco_rules.yaml: Ok');
  assert.match(r.stderr, /\d+ rules \((\d+) compiled/);
  const [, rules, compiled] = r.stderr.match(/(\d+) rules \((\d+) compiled/)!;
  assert.is(compiled, rules);
});

test('build: rae replay raises the audit sample alert', () => {
  const r = rae(['replay', '-r', 'rules/orchestrator-audit/k8s_audit_rules.yaml', '--format', 'audit', '--input', 'test/fixtures/k8saudit-samples/exec_pod.json']);
  assert.is(r.status, 0, r.stderr);
  const alerts = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { rule: string });
  assert.ok(
    alerts.some((a) => a.rule === 'Attach/Exec Pod'),
    r.stdout,
  );
});

test('build: rae convert and rae event-generator list', () => {
  const c = rae(['convert', '--input', 'rules/orchestrator-audit/k8s_audit_rules.yaml']);
  assert.is(c.status, 0, c.stderr);
  assert.match(c.stdout, 'kind: EngineAuditRules');
  const g = rae(['event-generator', 'list', '--json']);
  assert.is(g.status, 0, g.stderr);
  assert.ok(
    g.stdout
      .trim()
      .split('\n')
      .every((l) => (JSON.parse(l) as { action: string }).action.length > 0),
  );
});

test('build: rae admin creates the database from the built migrations', () => {
  const state = join(tmp, 'admin-state');
  const c = rae(['admin', 'user', 'create', 'alice', '--state-dir', state]);
  assert.is(c.status, 0, c.stderr);
  const l = rae(['admin', 'user', 'list', '--state-dir', state]);
  assert.is(l.status, 0, l.stderr);
  assert.match(l.stdout, 'alice');
});

// The API's migrations from the build are the admin test's; here the rest of a start (PGlite's first
// start under load takes minutes). The build ships the default rules' compiled module
// (host/cli/run/ship-module.ts): a first start takes it instead of compiling, and the start log
// says so; a shipped module that fails the checks is refused and the rules compile in the worker.
const runArgs = (state: string) => ['--state-dir', join(tmp, state), '-o', 'forwarder.port=0', '-o', 'api.enabled=false', '-o', 'webhook.port=0'];
const SHIPPED_NOTE = '(compiled module shipped with the build)';

test('build: rae run gets ready on the module shipped with the build (webhook, syscall source) and stops', async () => {
  assert.equal(readdirSync(join(out, 'module-cache')).filter((n) => n.endsWith('.wasm')).length, 1, 'one shipped module');
  const run = startRae(runArgs('run-state'));
  try {
    await run.waitLog(/run: ready/, 0, 600_000);
    assert.match(run.stderr(), /resources: ruleset loaded in \d+ ms: .*\(compiled module shipped with the build\)/);
  } finally {
    assert.is(await run.stop(), 0, run.stderr());
  }
  assert.match(readFileSync(join(out, 'package.json'), 'utf8'), '"type": "module"');
});

test('build: a damaged shipped module is refused, the rules compile in the worker', async () => {
  const [file] = readdirSync(join(out, 'module-cache'));
  const path = join(out, 'module-cache', file!);
  writeFileSync(path, readFileSync(path).subarray(0, 1000));
  const run = startRae(runArgs('damaged-state'));
  try {
    await run.waitLog(/run: ready/, 0, 600_000);
    assert.match(run.stderr(), /resources: ruleset loaded in \d+ ms/);
    assert.not.match(run.stderr(), SHIPPED_NOTE);
  } finally {
    assert.is(await run.stop(), 0, run.stderr());
  }
  assert.ok(readdirSync(join(tmp, 'damaged-state', 'module-cache')).length > 0, "the compiled module went to the state directory's cache");
});

test('build: a first start unpacks the database template the build ships, in its own process', async () => {
  for (const f of ['pglite-template.tar.gz', 'pglite-template.key']) assert.ok(existsSync(join(out, 'host/api/db', f)), f);
  const run = startRae(['--state-dir', join(tmp, 'api-state'), '-o', 'forwarder.port=0', '-o', 'api.port=0', '-o', 'webhook.port=0']);
  try {
    // `run: ready (...)` either way: the API, opening alongside the start, may be up before the rest or after
    await run.waitLog(/run: ready \(.*\bapi\b/, 0, 600_000);
    assert.match(run.stderr(), /api: storage PGlite at \S+; unpacked from the build's database template \(pglite \S+, migrations 00/);
    assert.not.match(run.stderr(), /created the PGlite database|made by initdb/);
  } finally {
    assert.is(await run.stop(), 0, run.stderr());
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));
test.run();
