// Issue 19, item 3, end to end: the 2 KiB EngineAuditRules of 24 macros that each use the
// previous one twice (its expansion killed `rae run` with a heap OOM, and again at every start
// since the file stays in the directory). It is rejected with a located RAE_ERR_EXPANSION_LIMIT,
// the other resources' rules go live, memory stays low, and a restart with the file still there
// comes up ready. `rae validate` on the same rules as a plain rules file exits 1 with the same
// located diagnostic.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditPoster, webhookClient } from '../../host/generator/index.js';
import { auditEvent } from '../../host/generator/audit-events.js';
import { RESOURCE_REJECTED_RULE } from '../../host/resources/index.js';
import { macroBombManifest, macroBombRules, positionOf } from '../helpers/macro-bomb.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';
import { canaryRules, moduleConfig } from '../helpers/resources.js';
import { tempDir } from '../helpers/temp-dir.js';

const MACROS = 24;

/** Peak resident set of a process, in MB (VmHWM). */
function peakRssMb(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
  return Number(kb) / 1024;
}

/** Waits for ready, checks the bomb's rejection, and that the canary rule is live. */
async function upWithBombRejected(rae: RaeRun, bombPath: string, where: string, tlsDir: string): Promise<void> {
  const [, url] = await rae.waitLog(/run: webhook listening on (\S+)/);
  await rae.waitLog(/run: ready/);
  assert.match(rae.stderr(), `${bombPath}:${where}: error RAE_ERR_EXPANSION_LIMIT (Expanded condition exceeds a size or depth limit): condition too large`);
  assert.match(rae.stderr(), /EngineAuditRules: canary/);
  await rae.waitAlerts((as) => as.some((a) => a.rule === RESOURCE_REJECTED_RULE && a.output_fields['resource.name'] === 'bomb'), 'the rejection alert');
  const health = await fetch(`${(await rae.waitLog(/run: forwarder listening on (\S+)/))[1]}/healthz`);
  assert.is(health.status, 200);
  await auditPoster(url!, webhookClient(tlsDir))([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'rae-canary' })]);
  await rae.waitAlerts((as) => as.some((a) => a.rule === 'Canary ConfigMap read'), 'the canary alert');
}

test('rae validate: the macro bomb as a rules file exits 1 with the located diagnostic', () => {
  const dir = tempDir('rae-bomb-');
  const file = join(dir, 'bomb.yaml');
  const text = macroBombRules(MACROS);
  writeFileSync(file, text);
  const r = spawnSync(process.execPath, ['bin/rae.js', 'validate', '-r', file], { encoding: 'utf8', timeout: 120_000 });
  assert.is(r.status, 1, r.stderr);
  const at = positionOf(text, 'condition: (m12 and', 'm12', 1);
  assert.match(
    r.stdout,
    `${file}:${at.line}:${at.column}: error RAE_ERR_EXPANSION_LIMIT (Expanded condition exceeds a size or depth limit): condition too large: it expands to 65529 nodes, over the limit of 50000 (macro 'm12' here expands to 32761 nodes, 37 levels deep)\n    In rules content: (${file}:1:1)\n    macro 'm13': (${file}:${at.line - 1}:3)`,
  );
  assert.match(r.stdout, `error LOAD_ERR_VALIDATE (Error validating rule/macro/list/exception objects): Macro 'm${MACROS - 1}' has an invalid condition\n    In rules content: (${file}:1:1)\n    rule 'Macro bomb'`);
});

test('rae run: the macro bomb in the resources directory is rejected, the rest goes live, and a restart comes up ready', async () => {
  const root = tempDir('rae-bomb-');
  const state = join(root, 'state');
  const resources = join(root, 'resources');
  mkdirSync(resources);
  writeFileSync(join(resources, 'module.yaml'), moduleConfig());
  writeFileSync(join(resources, 'canary.yaml'), canaryRules());
  const bombPath = join(resources, 'bomb.yaml');
  const bomb = macroBombManifest(MACROS, 'bomb');
  writeFileSync(bombPath, bomb);
  const at = positionOf(bomb, 'condition: (m12 and', 'm12', 1);
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'hostname: n1\nrules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n');
  const args = ['--config', cfg, '--state-dir', state, '--resources', resources];

  const first = startRae(args);
  try {
    await upWithBombRejected(first, bombPath, `${at.line}:${at.column}`, join(state, 'webhook-tls'));
    // The expansion is refused before it is built: the peak stays far below the 1.2 GB that
    // 18 such macros took (4.4 GB and a crash for 24). The report measures it against idle.
    const peak = peakRssMb(first.child.pid!);
    assert.ok(peak < 700, `peak RSS ${peak.toFixed(0)} MB`);
  } finally {
    assert.is(await first.stop(), 0, first.stderr());
  }

  // The file is still there: the next start must not crash on it.
  const second = startRae(args);
  try {
    await upWithBombRejected(second, bombPath, `${at.line}:${at.column}`, join(state, 'webhook-tls'));
  } finally {
    assert.is(await second.stop(), 0, second.stderr());
  }
});

test.run();
