// Nothing unused stays in the tree: no merge leftover (*.orig, *.rej) is tracked, and knip
// (knip.json) finds no unused file, export, exported type or duplicate export in host/, bench/,
// scripts/ and test/. An export counts as used when another file imports it (tests included);
// one used only inside its own file is not exported. `npx knip --fix --fix-type exports,types`
// drops the `export` of what it reports; what is then unused at all, tsc (noUnusedLocals) names.
import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const ROOT = resolve(import.meta.dirname, '..');

test('no tracked merge leftover (*.orig, *.rej)', () => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0');
  assert.ok(tracked.length > 500, `${tracked.length} tracked files read`);
  assert.equal(
    tracked.filter((f) => /\.(orig|rej)$/.test(f)),
    [],
  );
});

test('knip: no unused file, export or exported type', () => {
  const knip = spawnSync(process.execPath, [resolve(ROOT, 'node_modules/knip/bin/knip.js'), '--no-progress', '--no-config-hints'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(knip.status, 0, `knip exited ${knip.status}:\n${knip.stdout}${knip.stderr}`);
});

test.run();
