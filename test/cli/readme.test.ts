// The README's shell blocks, run as written against a real `rae run` on loopback: every ```sh
// block of README.md runs in bash (-e, pipefail) from the repository root, bounded by a timeout.
// Two things differ from a node, and only those are rewritten: the engine this test starts listens
// on ports 0 (the README's 2801 and 9765 become the ports it reports) and keeps its state in a
// temporary directory (the README's /var/lib/runtime-audit-engine). The block with `npm start` /
// `npm test` is not run (npm start is the `rae run` started here; npm test is this suite), but its
// text is checked, so a new command added to it is noticed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../helpers/rae-run.js';

const blocks = [...readFileSync('README.md', 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
const tmp = mkdtempSync(join(tmpdir(), 'rae-readme-'));
const state = join(tmp, 'state');
let rae: RaeRun | undefined;
const ports = { forwarder: '', webhook: '' };

test.before(async () => {
  const cfg = join(tmp, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  port: 0\nwebhook:\n  port: 0\n');
  rae = startRae(['--config', cfg, '--state-dir', state]);
  ports.forwarder = (await rae.waitLog(/run: forwarder listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]!;
  ports.webhook = (await rae.waitLog(/run: webhook listening on https:\/\/127\.0\.0\.1:(\d+)/, 0, 300_000))[1]!;
});

test.after(async () => {
  await rae?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A block with this engine's ports and state directory, run in bash from the repository root. */
function runBlock(block: string) {
  const script = block.replaceAll('127.0.0.1:2801', `127.0.0.1:${ports.forwarder}`).replaceAll('127.0.0.1:9765', `127.0.0.1:${ports.webhook}`).replaceAll('/var/lib/runtime-audit-engine', state);
  return spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { encoding: 'utf8', timeout: 120_000 });
}

test('readme: the quick-start block is npm start and npm test only (not run here)', () => {
  const quick = blocks.find((b) => b.includes('npm start'));
  assert.ok(quick);
  assert.equal(
    quick!
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean),
    ['npm start', 'npm test'],
  );
});

test('readme: every other shell block runs as written and exits 0', async () => {
  const others = blocks.filter((b) => !b.includes('npm start'));
  assert.ok(others.length >= 3, `${others.length} blocks`);
  for (const block of others) {
    const r = runBlock(block);
    assert.is(r.status, 0, `${block}\n--- stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`);
    assert.ok(r.stdout.trim().length > 0, block);
  }
  // what the blocks did reached the engine: the forwarder's test alert and the posted exec into a pod
  await rae!.waitAlerts((a) => a.some((x) => x.rule === 'Test rule') && a.some((x) => x.rule === 'Attach/Exec Pod'), 'the /test alert and the EventList alert');
});

test.run();
