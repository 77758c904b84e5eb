// `rae replay` of field events through both engines: 2,000 random syscall field events (drawn
// from the stable ruleset's constants, as in the differential tests) plus audit-source lines,
// replayed with --engine wasm and --engine interpreter and --rule-matching first and all; the
// alert lines on stdout must be identical, and some must be there.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { collectPools, eventArb } from '../../support/differential.js';
import { corpusPath } from '../../support/corpus.js';

const RULES = corpusPath('falco_rules.yaml');

test('replay (field events): --engine wasm and --engine interpreter print the same alert lines', () => {
  const rules = loadRules([{ name: 'falco_rules.yaml', text: readFileSync(RULES, 'utf8') }]).ruleset.rules;
  const types = [...new Set(rules.flatMap((r) => [...(r.evttypes ?? [])]))].sort();
  const objs = fc.sample(eventArb(collectPools(rules), 'syscall', types, new Set()), { numRuns: 2000, seed: 5 });
  const lines = objs.map((fields, i) => JSON.stringify({ source: 'syscall', time: `2024-05-01T10:00:${String(i % 60).padStart(2, '0')}.000000001Z`, fields }));
  lines.splice(100, 0, JSON.stringify({ source: 'k8s_audit', fields: { 'ka.verb': 'create' } }));
  const dir = mkdtempSync(join(tmpdir(), 'rae-replay-'));
  try {
    const input = join(dir, 'events.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    for (const matching of ['first', 'all']) {
      const run = (engine: string) =>
        spawnSync(process.execPath, ['bin/rae.js', 'replay', '-r', RULES, '--engine', engine, '--rule-matching', matching, '--hostname', 'h', '--input', input], {
          encoding: 'utf8',
          env: { ...process.env, TZ: 'UTC' },
          maxBuffer: 64 * 2 ** 20,
        });
      const wasm = run('wasm');
      const interp = run('interpreter');
      assert.is(wasm.status, 0, wasm.stderr);
      assert.is(interp.status, 0, interp.stderr);
      assert.ok(wasm.stdout.split('\n').length > 20, `only ${wasm.stdout.split('\n').length} alert lines`);
      assert.fixture(wasm.stdout, interp.stdout);
      assert.is(wasm.stderr.split('\n').at(-2), interp.stderr.split('\n').at(-2));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
