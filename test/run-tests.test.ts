// scripts/run-tests.mjs on a directory of its own test files (RAE_TEST_DIR): longest first by the
// directory's durations.json, each file in its own TMPDIR, a file's leftovers named on its line and
// counted in the summary, and every TMPDIR (the run's directory too) removed afterwards.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from './helpers/temp-dir.js';

/** A test file printing uvu's summary after `body` (no imports: it runs from a directory without node_modules). */
const fixture = (body: string) => `${body}\nconsole.log('tmp=' + process.env.TMPDIR);\nconsole.log('  Total:     1\\n  Passed:    1\\n  Skipped:   0');\n`;

test('run-tests: longest first, one TMPDIR per file, leftovers reported and removed', () => {
  const dir = tempDir('rae-run-tests-');
  const files = join(dir, 'run-tests-fixture');
  mkdirSync(files);
  writeFileSync(join(files, 'clean.test.ts'), fixture("import('node:fs').then((fs) => { fs.writeFileSync(process.env.TMPDIR + '/x', ''); fs.rmSync(process.env.TMPDIR + '/x'); });"));
  writeFileSync(join(files, 'leaky.test.ts'), fixture("require('node:fs').mkdirSync(process.env.TMPDIR + '/rae-leaky-left');"));
  writeFileSync(join(dir, 'durations.json'), JSON.stringify({ 'run-tests-fixture/leaky.test.ts': 50, 'run-tests-fixture/clean.test.ts': 1 }));
  const runTmp = tempDir('rae-run-tests-tmp-');
  const r = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'run-tests-fixture/'], {
    encoding: 'utf8',
    env: { ...process.env, RAE_TEST_DIR: dir, RAE_TEST_JOBS: '1', RAE_TEST_VERBOSE: '1', TMPDIR: runTmp },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const lines = r.stdout.split('\n').filter((l) => /^(ok|FAIL|skip)/.test(l));
  // leaky.test.ts first, though it sorts after clean.test.ts: it is the longest by durations.json
  assert.equal(
    lines.map((l) => l.split(/\s+/)[1]),
    ['run-tests-fixture/leaky.test.ts', 'run-tests-fixture/clean.test.ts'],
  );
  assert.match(lines[0]!, '(left in TMPDIR: rae-leaky-left)');
  assert.not.match(lines[1]!, 'left in TMPDIR');
  assert.match(r.stdout, 'temporary files: 1 file(s) left something in their TMPDIR (removed): run-tests-fixture/leaky.test.ts (1)');
  // each file had its own TMPDIR below the run's directory in the runner's TMPDIR
  const tmps = [...r.stdout.matchAll(/tmp=(\S+)/g)].map((m) => m[1]!);
  assert.is(tmps.length, 2);
  assert.is.not(tmps[0], tmps[1]);
  for (const t of tmps) {
    assert.ok(t.startsWith(`${runTmp}/`), t);
    assert.not.ok(existsSync(t), `${t} is left`);
  }
  // the run's directory is gone (tsx-<uid> is tsx's cache, which the runner links into each TMPDIR)
  assert.equal(
    readdirSync(runTmp).filter((n) => !/^tsx-\d+$/.test(n)),
    [],
    'the run directory is left',
  );
});

test('run-tests: one shared directory per run, the same for every file, not a leak, removed at the end', () => {
  const dir = tempDir('rae-run-tests-');
  const files = join(dir, 'shared-fixture');
  mkdirSync(files);
  // each file adds its name to a product in the shared directory (as support/image.ts keeps its archive there)
  for (const name of ['one', 'two'])
    writeFileSync(
      join(files, `${name}.test.ts`),
      fixture(
        `require('node:fs').appendFileSync(process.env.RAE_TEST_SHARED + '/product', '${name}\\n'); console.log('shared=' + process.env.RAE_TEST_SHARED + ' ' + require('node:fs').readFileSync(process.env.RAE_TEST_SHARED + '/product', 'utf8').trim().split('\\n').join(','));`,
      ),
    );
  const runTmp = tempDir('rae-run-tests-tmp-');
  const r = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'shared-fixture/'], {
    encoding: 'utf8',
    env: { ...process.env, RAE_TEST_DIR: dir, RAE_TEST_JOBS: '1', RAE_TEST_VERBOSE: '1', TMPDIR: runTmp },
  });
  assert.is(r.status, 0, r.stdout + r.stderr);
  const seen = [...r.stdout.matchAll(/shared=(\S+) (\S+)/g)].map((m) => [m[1]!, m[2]!]);
  assert.is(seen.length, 2, r.stdout);
  assert.is(seen[0]![0], seen[1]![0], 'both files saw the same shared directory');
  assert.ok(seen[0]![0].startsWith(`${runTmp}/`), seen[0]![0]);
  // the second file found what the first had left there
  assert.equal(
    seen.map(([, product]) => product.split(',').length),
    [1, 2],
  );
  assert.not.match(r.stdout, 'left in TMPDIR');
  assert.not.ok(existsSync(seen[0]![0]), 'the shared directory is left');
  assert.equal(
    readdirSync(runTmp).filter((n) => !/^tsx-\d+$/.test(n)),
    [],
    'the run directory is left',
  );
});

test.run();
