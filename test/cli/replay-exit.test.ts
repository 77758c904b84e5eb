// `rae replay` gates a CI job (issue 29 item 4): a rejected input line makes the exit status 1
// (the other lines still replayed, their alerts printed), clean input exits 0, and --help says so.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const RULES = ['-r', 'rules/syscall/falco_rules.yaml'];
const rae = (args: string[], input?: string) => spawnSync(process.execPath, ['bin/rae.js', 'replay', ...args], { encoding: 'utf8', input, env: { ...process.env, TZ: 'UTC' } });
const event = JSON.stringify({ fields: { 'evt.type': 'ptrace', 'evt.arg.request': 'PTRACE_ATTACH', 'proc.name': 'gdb', 'container.id': 'host' } });

test('replay: a rejected line exits 1, after replaying the others', () => {
  const r = rae([...RULES, '--engine', 'interpreter', '--input', '-'], `${event}\n{"fields": 3}\nnot json\n`);
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, "-:2: rejected: a field event needs a 'fields' object");
  assert.match(r.stderr, '-:3: rejected: invalid JSON');
  assert.match(r.stderr, 'replay: 1 events, 2 rejected, 1 alerts');
  assert.is(JSON.parse(r.stdout).rule, 'PTRACE attached to process');
});

test('replay: input without a rejected line exits 0; every line rejected exits 1', () => {
  assert.is(rae([...RULES, '--engine', 'interpreter', '--input', '-'], `${event}\n`).status, 0);
  const all = rae([...RULES, '--format', 'audit', '--engine', 'interpreter', '--input', '-'], '{"kind":"Nope"}\n');
  assert.is(all.status, 1, all.stderr);
  assert.match(all.stderr, '0 events, 1 rejected');
});

test('replay --help documents the exit status of rejected lines', () => {
  const r = rae(['--help']);
  assert.is(r.status, 0);
  assert.match(r.stdout, '1 input lines rejected');
});

test.run();
