// Issue 25, item 4: faults tried one engine after another on the same three ports (forwarder,
// webhook, API) must not leave a port taken for the next engine, and each failure must name its
// real cause. The sequence: the forwarder's port in use; a state directory read-only (the API's
// database directory cannot be made: EROFS, not Node's ENOENT of mkdir -p); the same directory
// full (ENOSPC, naming the directory); SIGTERM while the API creates its PGlite database (the
// engine used to keep every port until the database was made, then listen on the API's port on
// its way out); PGlite's directory deleted under a running engine, then SIGHUP. After each engine
// exits its three ports are free, and every later engine starts on them.
// Needs mount(2) for a small tmpfs (root); without it the test says so and skips, loudly.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../support/real-servers.js';
import { startRae, type RaeRun } from '../helpers/rae-run.js';

const tmp = mkdtempSync(join(tmpdir(), 'rae-fault-sequence-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
const RULES = join(tmp, 'rules.yaml');
writeFileSync(RULES, '- rule: Every audit event\n  desc: d\n  condition: ka.auditid != ""\n  output: seen %ka.auditid\n  priority: Warning\n  source: k8s_audit\n');
/** A stop that takes longer than this is an engine outliving SIGTERM (a wide margin for a busy machine). */
const STOP_DEADLINE_MS = 300_000;

/** The same three ports for every engine of the sequence. */
const ports = { forwarder: 0, webhook: 0, api: 0 };
let cfg = '';

/** `rae run` on the sequence's ports with its state in `stateDir`; `api` says whether the API runs. */
function engine(stateDir: string, api: boolean, env: NodeJS.ProcessEnv = {}): RaeRun {
  return startRae(['--config', cfg, '--state-dir', stateDir, '-o', `api.enabled=${api}`], [], { env });
}

/** SIGTERM, then the exit code; fails (after SIGKILL) when the engine outlives SIGTERM by STOP_DEADLINE_MS. */
async function stop(rae: RaeRun): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const outlived = new Promise<'outlived'>((resolve) => {
    timer = setTimeout(() => resolve('outlived'), STOP_DEADLINE_MS);
  });
  const code = await Promise.race([rae.stop(), outlived]);
  clearTimeout(timer);
  if (code === 'outlived') {
    rae.child.kill('SIGKILL');
    assert.unreachable(`the engine outlived SIGTERM by ${STOP_DEADLINE_MS / 1000} s:\n${rae.stderr()}`);
  }
  return code as number | null;
}

/** Fails unless each of the sequence's ports can be listened on (nothing left behind). */
async function assertPortsFree(after: string): Promise<void> {
  for (const [name, port] of Object.entries(ports)) {
    const server = createServer();
    const error = await new Promise<Error | undefined>((resolve) => {
      server.once('error', resolve);
      server.listen(port, '127.0.0.1', () => resolve(undefined));
    });
    if (!error) await new Promise((resolve) => server.close(resolve));
    assert.not.ok(error, `after ${after}: the ${name} port ${port} is still taken: ${error?.message}`);
  }
}

/** A tmpfs of `size` at a new directory, or undefined when this process cannot mount. */
function tmpfs(size: string): string | undefined {
  const dir = mkdtempSync(join(tmp, 'mnt-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) return dir;
  console.warn(`SKIPPED: cannot mount a tmpfs (${r.stderr.trim() || r.error?.message}); the fault sequence needs root`);
  rmdirSync(dir);
  return undefined;
}

/** Runs an engine that must start; waits for `until` in its log, runs `during`, stops it (exit 0) and checks the ports. */
async function run(what: string, stateDir: string, api: boolean, until: RegExp, during?: (rae: RaeRun, m: RegExpMatchArray) => Promise<void>): Promise<string> {
  const rae = engine(stateDir, api);
  try {
    await rae.waitLog(new RegExp(`run: forwarder listening on http://127\\.0\\.0\\.1:${ports.forwarder}`));
    const m = await rae.waitLog(until);
    await during?.(rae, m);
  } finally {
    assert.is(await stop(rae), 0, rae.stderr());
  }
  await assertPortsFree(what);
  return rae.stderr();
}

test('fault sequence: every later engine starts on the same ports, and each failure names its real cause', async () => {
  const mnt = tmpfs('64m');
  if (!mnt) return;
  try {
    ports.forwarder = await freePort();
    ports.webhook = await freePort();
    ports.api = await freePort();
    cfg = join(tmp, 'run.yaml');
    writeFileSync(cfg, `rules:\n  builtIn: []\n  files: [${RULES}]\nforwarder:\n  port: ${ports.forwarder}\nwebhook:\n  port: ${ports.webhook}\napi:\n  port: ${ports.api}\n`);

    // 1. The forwarder's port in use: exit 1 naming the forwarder, its address and EADDRINUSE.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(ports.forwarder, '127.0.0.1', resolve));
    const taken = spawnSync(process.execPath, ['bin/rae.js', 'run', '--config', cfg, '--state-dir', join(tmp, 'taken'), '-o', 'api.enabled=false'], { encoding: 'utf8', timeout: 600_000 });
    await new Promise((resolve) => blocker.close(resolve));
    assert.is(taken.status, 1, taken.stderr);
    assert.match(taken.stderr, `run: failed to start: forwarder: cannot listen on 127.0.0.1:${ports.forwarder} (forwarder.address, forwarder.port): listen EADDRINUSE`);
    await assertPortsFree('the engine whose forwarder port was taken');

    // 2. A first run seeds the state (resources, webhook TLS) without the API; read-only, the API
    // cannot make its database directory and says EROFS (Node's mkdir -p says ENOENT).
    await run('a first run', mnt, false, /run: ready \(/);
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    await run('the read-only state directory', mnt, true, /run: the api failed to start: (.*); detection goes on without it/, async (_rae, m) => {
      assert.is(m[1], `cannot create the API database directory ${mnt}/api-db: ${mnt} is on a read-only file system (EROFS)`);
    });

    // 3. Full: the API names ENOSPC and where.
    execFileSync('mount', ['-o', 'remount,rw', mnt]);
    spawnSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=1M', 'count=100']); // fills it (dd stops at ENOSPC)
    await run('the full state directory', mnt, true, /run: the api failed to start: (.*); detection goes on without it/, async (_rae, m) => {
      assert.match(m[1]!, new RegExp(`^cannot (create|take|open) .*${mnt}/api-db.*: no space left on the file system of ${mnt}(/api-db)? \\(ENOSPC\\)$`));
    });

    // 4. SIGTERM while the API creates its database: every port is free before that ends, so the
    // next engine starts at once; the API never listens; the engine exits 0 once the database is made.
    // From the sources (RAE_TSX): no database template, so the database is created with initdb and
    // the migrations, which outlasts the stop of the other components (the build's template is
    // unpacked in about a second, often before they are stopped).
    const state = join(tmp, 'state');
    const creating = engine(state, true, { RAE_TSX: '1' });
    let creatingDone = false;
    try {
      await creating.waitLog(/run: started \(.*\); waiting for api starting/);
      creating.child.kill('SIGTERM');
      await creating.waitLog(/run: every component is stopped but the api, which is still opening its database/);
      await run('an engine started while the previous one still created its database', join(tmp, 'beside'), false, /run: ready \(/);
      assert.is(await stop(creating), 0, creating.stderr());
      creatingDone = true;
    } finally {
      if (!creatingDone) await stop(creating);
    }
    const afterTerm = creating.stderr().slice(creating.stderr().indexOf('SIGTERM received'));
    assert.not.match(afterTerm, /api: listening on/, creating.stderr());
    assert.match(afterTerm, /run: the api did not start: stopped while it opened its database \(closed, never listened\)/);
    await assertPortsFree('the engine stopped while its API created its database');

    // 5. PGlite's directory deleted under a running engine, then SIGHUP, then SIGTERM.
    await run('the engine whose PGlite directory was deleted', state, true, /run: ready \(.*api\)/, async (rae) => {
      rmSync(join(state, 'api-db'), { recursive: true, force: true });
      const res = await fetch(`http://127.0.0.1:${ports.api}/api/v4/projects/1/error_tracking/settings`);
      assert.is(res.status, 503, await res.text());
      await rae.waitLog(/api: the PGlite directory .* is gone/);
      const mark = rae.stderr().length;
      rae.child.kill('SIGHUP');
      await rae.waitLog(/run: reload done/, mark);
    });

    // 6. And the next engine starts on the same ports.
    await run('the last engine', state, false, /run: ready \(/);
  } finally {
    spawnSync('umount', [mnt]);
  }
});

test.run();
