// The engine tracks its own faults (issue 31, item 3): a real `rae run` with the API on and no
// errorTracking.dsn creates its own project at the first start and reports to it. A compile
// worker that runs out of its heap cap (rules.compileWorkerHeapMb at its floor) on a reload (the
// running rules stay; at the first start it would stop the engine) and an output
// that keeps failing (a webhook output to a closed loopback port, no retries) both appear as
// errors of that project, read back through the REST API, with their component and version.
// The compile that exhausts the cap is a 10,000-term audit rule (test/runtime/compile-bounds
// measures the same with a syscall rule).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { versionInfo } from '../../host/cli/run-info.js';
import { SELF_PROJECT_PATH } from '../../host/tracking/index.js';
import { startRae } from '../helpers/rae-run.js';

const root = mkdtempSync(join(tmpdir(), 'rae-error-tracking-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

const TOKEN = 'glpat-errorTrackingTest0001';
type Obj = Record<string, unknown>;

/** A loopback port nobody listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** An audit rule whose condition has `n` terms: its module needs far more than 64 MB to build. */
function bigAuditRule(n: number): string {
  const terms = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `ka.user.name = u${i}` : `ka.target.name contains c${i}`));
  return `- rule: big\n  desc: d\n  condition: ka.verb = create and (${terms.join(' or ')})\n  output: big %ka.verb\n  priority: WARNING\n  source: k8s_audit\n`;
}

test('rae run reports a compile worker failure and a failing output to its own project', async () => {
  const bootstrap = join(root, 'bootstrap.yaml');
  writeFileSync(bootstrap, `users:\n  - username: root\n    admin: true\n    tokens:\n      - token: ${TOKEN}\n`);
  const rules = join(root, 'big.yaml');
  writeFileSync(rules, bigAuditRule(3));
  const cfg = join(root, 'config.yaml');
  writeFileSync(
    cfg,
    [
      'rules:\n  builtIn: [orchestrator-audit]\n  compileWorkerHeapMb: 64\n  watch: false',
      `forwarder:\n  port: 0\n  webhookUrl: http://127.0.0.1:${await closedPort()}/\n  webhookRetries: 0`,
      'webhook:\n  port: 0',
      `api:\n  port: 0\n  externalScheme: http\n  bootstrapFile: ${bootstrap}`,
    ].join('\n'),
  );
  const rae = startRae(['--config', cfg, '--state-dir', join(root, 'state'), '-r', rules]);
  try {
    const forwarder = (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]!;
    const api = (await rae.waitLog(/run: api listening on (\S+)/, 0, 300_000))[1]!;
    await rae.waitLog(/error tracking: reporting the engine's faults to the integrated error tracking of project runtime-audit-engine\/runtime-audit-engine/);
    await rae.waitLog(/run: ready/, 0, 300_000);
    const mark = rae.stderr().length;
    writeFileSync(rules, bigAuditRule(10_000));
    rae.child.kill('SIGHUP');
    await rae.waitLog(/EWORKER: the compile worker stopped: out of memory/, mark, 300_000);
    const test = await fetch(`${forwarder}/test`, { method: 'POST' });
    assert.is(test.status, 200);

    const base = `${api}/api/v4/projects/${encodeURIComponent(SELF_PROJECT_PATH)}/error_tracking`;
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { 'private-token': TOKEN } });
      assert.is(res.status, 200, path);
      return (await res.json()) as Obj & Obj[];
    };
    // Events are sent off the detection path: wait for both, with a wide deadline.
    const deadline = Date.now() + 120_000;
    let errors: Obj[] = [];
    while (Date.now() < deadline) {
      errors = await get('/errors');
      if (['EWORKER', 'OutputFailed'].every((n) => errors.some((e) => e.name === n))) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const version = versionInfo().version;
    const found: Record<string, string> = {};
    // the failed reload is reported by the module as a rejected ruleset, its culprit the compile worker
    for (const [name, component] of [
      ['EWORKER', 'compile-worker'],
      ['OutputFailed', 'output'],
    ] as const) {
      const e = errors.find((x) => x.name === name);
      assert.ok(e, `${name} reported: ${JSON.stringify(errors)}\n--- stderr:\n${rae.stderr()}`);
      const detail = await get(`/errors/${e!.id}`);
      assert.equal([detail.culprit, detail.last_release, (detail.tags as Obj).component, (detail.tags as Obj).version], [component, `runtime-audit-engine@${version}`, component, version]);
      assert.match(String((detail.tags as Obj).node), /.+/);
      found[name] = String(detail.description);
    }
    // Reported by the engine (the reload went live on the interpreter, the compiled tier failed)
    // or by the module (the reload was rejected): which one depends on timing; both keep the running rules.
    assert.match(found.EWORKER!, /the compile worker stopped: out of memory|resource rejected: .*the running rules stay/, found.EWORKER);
    assert.match(found.OutputFailed!, /webhook output failed past its retries/);
  } finally {
    assert.is(await rae.stop(), 0, rae.stderr());
  }
  assert.match(rae.stderr(), /error tracking: \d+ fault\(s\), \d+ event\(s\) sent, 0 dropped, 0 not accepted/);
});

test.run();
