#!/usr/bin/env node
// Runs every uvu test file under test/ (TypeScript through tsx) and ends with the plain summary
// line `N passed, N failed[, N skipped]`. In CI (CI=true) a skipped test counts as a failure,
// because nothing may be skipped there (see README, "Tests").
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// uvu's package exports do not include its CLI, so it is named by path.
const uvuBin = fileURLToPath(new URL('../node_modules/uvu/bin.js', import.meta.url));
const pattern = process.argv[2] ?? '\\.test\\.ts$';
const child = spawn(process.execPath, ['--import', 'tsx', uvuBin, 'test', pattern], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
});

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});

child.on('close', (code, signal) => {
  const num = (label) => {
    const m = new RegExp(`${label}:\\s+(\\d+)`).exec(tail);
    return m ? Number(m[1]) : 0;
  };
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped');
  let failed = total - passed;
  if ((code !== 0 || signal) && failed === 0) failed = 1; // a crash outside any test still fails the run
  const inCI = process.env.CI === 'true' || process.env.CI === '1';
  let line = `${passed} passed, ${failed} failed`;
  if (skipped > 0) line += `, ${skipped} skipped`;
  if (inCI && skipped > 0) process.stderr.write(`CI: ${skipped} skipped test(s) count as failures\n`);
  process.stdout.write(`\n${line}\n`);
  process.exit(failed > 0 || (inCI && skipped > 0) ? 1 : 0);
});
