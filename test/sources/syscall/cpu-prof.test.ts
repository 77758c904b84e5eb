// `rae run` under Node's CPU profiler (node --cpu-prof), as an operator profiles the
// engine (docs/benchmarks.md): the kernel source starts. V8 samples the main thread with SIGPROF
// every millisecond; a signal during the verifier's run made the probe load fail with EAGAIN,
// every retry too, so a profiled engine ran without its kernel source. The addon holds signals
// while the probe loads (probes/addon/capture.c).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../../helpers/rae-run.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('cpu-prof.test.ts');
const t = gate.run ? test : test.skip;

t('rae run under --cpu-prof: the kernel source starts, and the profile is written at stop', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rae-cpu-prof-'));
  const profiles = join(root, 'profiles');
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'rules:\n  builtIn: [syscall]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  enabled: false\n');
  const rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')], [], { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`] });
  try {
    const line = await rae.waitLog(/module: source syscall (started|did not start: .*)/, 0, 300_000);
    assert.is(line[0], 'module: source syscall started', rae.stderr());
    assert.is(await rae.stop(), 0);
    assert.ok(
      readdirSync(profiles).some((f) => f.endsWith('.cpuprofile')),
      'a .cpuprofile written',
    );
  } finally {
    await rae.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
