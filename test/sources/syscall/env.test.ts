// proc.env and proc.env[NAME] on real kernel records, the C translator against the TypeScript
// oracle. libsinsp takes a process's environment from the execve exit event's `env` parameter
// (the driver reads the new image's mm env area, at most SCAP_MAX_ENV_SIZE bytes) or from
// /proc/PID/environ; proc.env is the variables joined by blanks (concatenate_all_env), and
// proc.env[NAME] one variable's value stripped of blanks, "" when the process has none
// (sinsp_threadinfo::get_env(name): the process's own environment only). Here: execs with a chosen
// environment (env -i), the incubating rules 'Program run with disallowed http proxy env' (curl
// with HTTP_PROXY) and 'Potential Local Privilege Escalation via Environment Variables Misuse'
// (GLIBC_TUNABLES) fire for the action and not without the variable, and two perl processes that
// existed before the capture, one in the /proc snapshot and one the unknown-process lookup reads,
// have their /proc/PID/environ.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { readProcess } from '../../../host/sources/syscall/procfs.js';
import { compileAll } from '../../../support/differential.js';
import { corpusText } from '../../../support/corpus.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import type { RuleModule } from '../../../host/runtime/evaluator.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('env.test.ts');
const run_ = gate.run ? test : test.skip;

const KEYS = ['RAE_A', 'RAE_B', 'RAE_NONE', 'HTTP_PROXY', 'RAE_BOOT'];
const REFS = [fieldRef('evt.type'), fieldRef('proc.name'), fieldRef('proc.ppid'), fieldRef('proc.env'), ...KEYS.map((k) => fieldRef(`proc.env[${k}]`))];
const PROXY_RULE = 'Program run with disallowed http proxy env';
const TUNABLES_RULE = 'Potential Local Privilege Escalation via Environment Variables Misuse';

/** Perl that prints its pid, then opens /etc/hostname every 20 ms (events of a process that existed before the capture). */
const OPENER = '$| = 1; print "$$\\n"; while (1) { open(my $f, "<", "/etc/hostname"); close $f; select(undef, undef, undef, 0.02) }';

async function opener(env: Record<string, string>): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn('/usr/bin/perl', ['-e', OPENER], { stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: '/usr/bin:/bin', ...env } });
  const pid = await new Promise<number>((done) => child.stdout!.once('data', (d: Buffer) => done(Number(d.toString().trim()))));
  return { child, pid };
}

run_("env: proc.env and proc.env[NAME] as libsinsp renders them from exec, the /proc snapshot and the unknown-process lookup; the environment rules fire for the variable's action only", async () => {
  const loaded = loadRules(['falco-incubating_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) })));
  assert.ok(loaded.ok);
  const envRules = loaded.ruleset.rules.filter((r) => r.name === PROXY_RULE || r.name === TUNABLES_RULE);
  assert.is(envRules.length, 2);
  // a rule reading each keyed variable, so the translators fill a slot for each
  const keyed = loadRules([{ name: 'env.yaml', text: `- rule: every env key\n  desc: d\n  condition: (${KEYS.map((k) => `proc.env[${k}] exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n` }]).ruleset.rules;
  assert.is(keyed.length, 1);
  const m = await compileAll([...envRules, ...keyed]);

  const seen = await opener({ RAE_BOOT: ' snap shot ' });
  const unseen = await opener({ RAE_BOOT: 'looked up', RAE_A: 'u' });
  const execs: Array<{ argv: string[]; env: Record<string, string> }> = [
    { argv: ['/bin/true'], env: { RAE_A: '1', RAE_B: '  x y  ', EMPTY: '', RAE_AB: 'no' } },
    { argv: ['/usr/bin/curl', '--version'], env: { HTTP_PROXY: 'http://proxy.invalid:3128' } },
    { argv: ['/usr/bin/curl', '--version'], env: { RAE_A: 'no proxy' } },
    { argv: ['/bin/true'], env: { GLIBC_TUNABLES: 'glibc.malloc.mxfast=0' } },
    { argv: ['/bin/true'], env: {} },
  ];
  try {
    const rec = recordKernel(
      ['openat', 'execve', 'execveat'],
      () => {
        // env -i: the exec'd program's environment is exactly these variables, in this order
        for (const e of execs) execFileSync('/usr/bin/env', ['-i', ...Object.entries(e.env).map(([k, v]) => `${k}=${v}`), ...e.argv], { stdio: 'ignore' });
        execFileSync('/bin/sleep', ['0.3']); // the openers' events
      },
      32,
      new Set([unseen.pid]),
    );
    check(rec, m, seen.pid, unseen.pid, execs);
  } finally {
    seen.child.kill('SIGKILL');
    unseen.child.kill('SIGKILL');
  }
});

/** The assertions on a recording; the openers `seen` and `unseen` are still running (the unknown-process lookup reads /proc). */
function check(rec: Recording, m: RuleModule, seenPid: number, unseenPid: number, execs: ReadonlyArray<{ env: Record<string, string> }>): void {
  // the C translator and the oracle agree on every slot and rendered value (the openers are alive: read them before they go)
  const lookups = { read: (pid: number) => readProcess(pid) };
  const pass = translatorsPass(rec, m, 'env-test', REFS, lookups);
  assert.ok(
    KEYS.every((k) => pass.slots.includes(`proc.env[${k}]`)),
    pass.slots.join(' '),
  );
  assert.is(pass.native.length, pass.oracle.length);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 5), []);

  // the oracle's values of each event, as alerts print them, and the rules each event matched
  const dv = new DataView(rec.buf.buffer);
  const events: Array<{ off: number; pid: number; v: Record<string, unknown> }> = [];
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'env-test', unknownProcesses: lookups }), (off, ev) => {
    events.push({ off, pid: dv.getUint32(off + HDR.pid, true), v: Object.fromEntries(REFS.map((f) => [f.canonical, ev.field(f)])) });
  });
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'env-test', unknownProcesses: lookups }), () => {});
  // the execve of each program env -i ran (in the env process this test started: env's own exec comes first)
  const execves = events.filter((e) => e.v['evt.type'] === 'execve' && e.v['proc.ppid'] === process.pid && (e.v['proc.name'] === 'true' || e.v['proc.name'] === 'curl'));
  assert.is(execves.length, execs.length, execves.map((e) => JSON.stringify(e.v)).join('\n'));
  execves.forEach((e, k) => {
    const want = execs[k]!.env;
    assert.is(
      e.v['proc.env'],
      Object.entries(want)
        .map(([n, v]) => `${n}=${v}`)
        .join(' '),
      `proc.env of exec ${k}`,
    );
    for (const key of KEYS) assert.is(e.v[`proc.env[${key}]`], (want[key] ?? '').trim(), `proc.env[${key}] of exec ${k}`);
    const fired = matched.get(e.off) ?? [];
    assert.is(fired.includes(PROXY_RULE), k === 1, `${PROXY_RULE} for exec ${k}`);
    assert.is(fired.includes(TUNABLES_RULE), k === 3, `${TUNABLES_RULE} for exec ${k}`);
  });
  // "EMPTY=" has no value for get_env, "RAE_AB" is not RAE_A: exact names only
  assert.is(execves[0]!.v['proc.env[RAE_A]'], '1');
  // the openers: the snapshot's /proc/PID/environ, and the lookup's for the one the snapshot left out
  for (const [pid, boot, a] of [
    [seenPid, 'snap shot', ''],
    [unseenPid, 'looked up', 'u'],
  ] as const) {
    const opens = events.filter((e) => e.pid === pid && e.v['evt.type'] === 'openat');
    assert.ok(opens.length > 0, `openat events of opener ${pid}`);
    for (const e of opens) {
      assert.is(e.v['proc.env[RAE_BOOT]'], boot);
      assert.is(e.v['proc.env[RAE_A]'], a);
      assert.match(String(e.v['proc.env']), `RAE_BOOT=${boot === 'snap shot' ? ' snap shot ' : boot}`);
    }
  }
}

test.run();
