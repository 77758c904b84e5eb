#!/usr/bin/env node
// Runs the uvu test files under test/ (TypeScript through tsx), each in its own Node process, and
// ends with the plain summary line `N passed, N failed[, N skipped]`. In CI (CI=true) a skipped
// test counts as a failure, because nothing may be skipped there (see README, "Tests").
//
//   node scripts/run-tests.mjs [PATTERN]     PATTERN: a regex over paths below test/ (uvu's rule)
//
// RAE_TEST_DIR=DIR runs the files below DIR instead of test/ (the runner's own test does).
//
// - One line per file when it ends: its result and duration; a failing file's whole output
//   (stdout and stderr) is printed with it. RAE_TEST_VERBOSE=1 prints every file's output.
// - A file that runs longer than RAE_TEST_TIMEOUT_S (default 900; deploy/ files, which build the
//   engine image, at least 3600) is stopped with its process group (servers it started included)
//   and counts as one failure, with a message saying so.
// - Files run RAE_TEST_JOBS at a time (default 2). Files that use the kernel probe or the
//   machine's process state (EXCLUSIVE below) run alone, with nothing beside them.
// - Longest first (in each of the two groups), so that the last file to end is a short one: by
//   the previous run's durations here (node_modules/.cache/run-tests/durations.json, written at
//   the end of every run), else by durations.json in the test directory (a fresh clone: CI;
//   refresh it from a quiet run's cache now and then), else 10 s.
// - Each file gets its own empty TMPDIR under one run directory, removed after the file; a file
//   that left anything in it is named on its line and counted in the summary (a leak to fix).
//   The TMPDIR holds a link to tsx's transform cache, tsx-<uid> in the machine's temporary
//   directory, so that cache is shared across files as before (and not counted as a leak).
// - RAE_TEST_SHARED names one directory of the run that every file sees (beside, not below, the
//   TMPDIRs; removed at the end of the run): set-up that several files repeat keeps its product
//   there, keyed by its inputs and built under a lock (support/image.ts: the engine image).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const testDir = resolve(process.env.RAE_TEST_DIR || join(root, 'test'));
const pattern = new RegExp(process.argv[2] ?? '\\.test\\.ts$', 'i');
const jobs = Math.max(1, Number(process.env.RAE_TEST_JOBS ?? 2) || 1);
const timeoutS = Math.max(1, Number(process.env.RAE_TEST_TIMEOUT_S ?? 900) || 900);
/** deploy/ files build the engine image first (640-840 s of it under a CPU hog; a passing pod.test run took 1040 s): at least 3600 s each. */
const timeoutOf = (rel) => (/^deploy\//.test(rel) ? Math.max(timeoutS, 3600) : timeoutS);
const verbose = process.env.RAE_TEST_VERBOSE === '1';
const inCI = process.env.CI === 'true' || process.env.CI === '1';

/**
 * Test files that load the kernel probe, read every process, or time the machine, and the
 * deploy/ files, which build the engine image and run pods (minutes of both cores each), and the
 * console's browser test (the kernel probe and a chromium): run alone.
 */
const EXCLUSIVE = /^(sources\/syscall|probes|generator|deploy|testing\/suite-run|console\/browser)/;
/**
 * Files under those directories that use neither the kernel probe nor the machine's processes nor
 * an image: pure functions, the addon's decoders on synthetic records, a stand-in for /proc,
 * manifests rendered without a cluster, an HTTPS server on loopback. They run in the shared group.
 */
const NOT_EXCLUSIVE = /^(deploy\/(manifests|crds)|generator\/post|probes\/(layout|ingest-fuzz)|sources\/syscall\/(container-id|decode|env-index|fields|thread-table-drops|thread-table-env|unknown-process-fake))\.test\.ts$/;
const runsAlone = (rel) => EXCLUSIVE.test(rel) && !NOT_EXCLUSIVE.test(rel);

/** Seconds each file took: the previous run's here (test/ only), else the table in the test directory. */
const durationsCache = process.env.RAE_TEST_DIR ? undefined : join(root, 'node_modules/.cache/run-tests/durations.json');
const readJson = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
};
const previous = durationsCache ? readJson(durationsCache) : {};
const table = readJson(join(testDir, 'durations.json'));
const known = (rel) => previous[rel] ?? table[rel] ?? 10;
/** Longest first; files of no known duration count as 10 s. */
const longestFirst = (files) => [...files].sort((a, b) => known(b) - known(a));

/**
 * The run's temporary directory: one TMPDIR per file below it (mode 1777 as /tmp, since tests run
 * processes as other users), each with a link to tsx's cache (tsx-<uid>, named by os.tmpdir()).
 */
const machineTmp = tmpdir();
let runTmp = '';
const tsxCache = `tsx-${process.getuid?.() ?? 0}`;
mkdirSync(join(machineTmp, tsxCache), { recursive: true, mode: 0o700 });
let tmpCount = 0;
function fileTmp() {
  // short names: paths below a TMPDIR have limits (podman's --runroot: 50 characters; sockets: 108)
  const dir = join(runTmp, (++tmpCount).toString(36));
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  symlinkSync(join(machineTmp, tsxCache), join(dir, tsxCache));
  return dir;
}
/** Mount points at or below `dir` (a leaked mount: removing the tree would delete through it). */
const mountsBelow = (dir) =>
  readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => (l.split(' ')[1] ?? '').replace(/\\040/g, ' '))
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
let keptTmp = 0;
/**
 * What a file left in its TMPDIR (tsx's caches aside: tsx-<uid> of other users too), then removes
 * it; a TMPDIR with a mount below it is kept (and the mount named), never deleted through.
 */
function sweepTmp(dir) {
  let left = [];
  try {
    left = readdirSync(dir).filter((n) => !/^tsx-\d+$/.test(n));
  } catch {
    /* the test removed its TMPDIR itself */
  }
  const mounts = mountsBelow(dir);
  if (mounts.length > 0) {
    keptTmp += 1;
    return [...left, ...mounts.map((m) => `mount ${m} (kept, not removed)`)];
  }
  rmSync(dir, { recursive: true, force: true });
  return left;
}

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const file = join(dir, name);
    if (statSync(file).isDirectory()) out.push(...collect(file));
    else {
      const rel = relative(testDir, file);
      if (pattern.test(rel) && /\.test\.ts$/.test(rel)) out.push(rel);
    }
  }
  return out;
}

/** Runs one file; resolves with its counts, duration and output. */
function runFile(rel) {
  return new Promise((resolveRun) => {
    const t0 = performance.now();
    const tmp = fileTmp();
    const child = spawn(process.execPath, ['--import', 'tsx', join(testDir, rel)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      // RAE_CONSOLE_PORT=0: every `rae run` a test starts puts its console on a free port, not on
      // the default 2802 that two files running side by side would both want
      env: { RAE_CONSOLE_PORT: '0', ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', TMPDIR: tmp, RAE_TEST_SHARED: sharedDir },
    });
    const chunks = [];
    let tail = '';
    child.stdout.on('data', (c) => {
      chunks.push(c);
      tail = (tail + c.toString('utf8')).slice(-4096);
    });
    child.stderr.on('data', (c) => chunks.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutOf(rel) * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // a test file may leave children behind in its group if it crashed: stop them
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* the group is gone */
      }
      const num = (label) => {
        const m = new RegExp(`${label}:\\s+(\\d+)`).exec(tail);
        return m ? Number(m[1]) : 0;
      };
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped');
      let failed = Math.max(0, total - passed);
      let note = '';
      if (timedOut) {
        failed += 1;
        note = `stopped after the per-file timeout of ${timeoutOf(rel)} s (RAE_TEST_TIMEOUT_S; deploy/ at least 3600)`;
      } else if ((code !== 0 || signal) && failed === 0) {
        failed = 1; // a crash outside any test still fails the run
        note = `exited with ${signal ?? `code ${code}`} outside any test`;
      }
      const left = sweepTmp(tmp);
      resolveRun({ rel, passed, failed, skipped, seconds: (performance.now() - t0) / 1000, output: Buffer.concat(chunks).toString('utf8'), note, left });
    });
  });
}

function report(r) {
  const counts = `${r.passed} passed${r.failed ? `, ${r.failed} failed` : ''}${r.skipped ? `, ${r.skipped} skipped` : ''}`;
  const mark = r.failed ? 'FAIL' : r.skipped ? 'skip' : 'ok  ';
  const left = r.left.length ? `  (left in TMPDIR: ${r.left.slice(0, 5).join(' ')}${r.left.length > 5 ? ` and ${r.left.length - 5} more` : ''})` : '';
  process.stdout.write(`${mark} ${r.rel}  ${counts}  ${r.seconds.toFixed(1)} s${r.note ? `  (${r.note})` : ''}${left}\n`);
  if (r.failed || verbose) process.stdout.write(`${r.output.replace(/^/gm, '     | ')}\n`);
}

const files = collect(testDir);
if (files.length === 0) {
  process.stdout.write(`no test file matches ${pattern}\n\n0 passed, 1 failed\n`);
  process.exit(1);
}
runTmp = mkdtempSync(join(machineTmp, 'rt-'));
chmodSync(runTmp, 0o755);
const sharedDir = join(runTmp, 'shared');
mkdirSync(sharedDir, { mode: 0o755 });
const shared = longestFirst(files.filter((f) => !runsAlone(f)));
const alone = longestFirst(files.filter(runsAlone));
process.stdout.write(`${files.length} test files: ${shared.length} run ${jobs} at a time, then ${alone.length} alone (per-file timeout ${timeoutS} s)\n`);

const t0 = performance.now();
const results = [];
let next = 0;
async function worker() {
  while (next < shared.length) {
    const r = await runFile(shared[next++]);
    results.push(r);
    report(r);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, shared.length) }, worker));
for (const f of alone) {
  const r = await runFile(f);
  results.push(r);
  report(r);
}

// the shared products (an image archive: hundreds of MB) go even when a kept TMPDIR keeps the run's directory
rmSync(sharedDir, { recursive: true, force: true });
if (keptTmp === 0) rmSync(runTmp, { recursive: true, force: true });
// This run's durations, for the next run's order (a file that timed out keeps its timeout as its figure).
if (durationsCache) {
  mkdirSync(dirname(durationsCache), { recursive: true });
  writeFileSync(durationsCache, `${JSON.stringify({ ...previous, ...Object.fromEntries(results.map((r) => [r.rel, Math.round(r.seconds)])) }, null, 1)}\n`);
}

const sum = (k) => results.reduce((a, r) => a + r[k], 0);
const passed = sum('passed');
const failed = sum('failed');
const skipped = sum('skipped');
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
process.stdout.write(`\nslowest: ${slowest.map((r) => `${r.rel} ${r.seconds.toFixed(0)} s`).join(', ')}; wall ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
const leaking = results.filter((r) => r.left.length > 0);
if (leaking.length) process.stdout.write(`temporary files: ${leaking.length} file(s) left something in their TMPDIR (removed): ${leaking.map((r) => `${r.rel} (${r.left.length})`).join(', ')}\n`);
const failing = results.filter((r) => r.failed).map((r) => r.rel);
if (failing.length) process.stdout.write(`failing files: ${failing.join(', ')}\n`);
if (inCI && skipped > 0) process.stderr.write(`CI: ${skipped} skipped test(s) count as failures\n`);
let line = `${passed} passed, ${failed} failed`;
if (skipped > 0) line += `, ${skipped} skipped`;
process.stdout.write(`\n${line}\n`);
process.exit(failed > 0 || (inCI && skipped > 0) ? 1 : 0);
