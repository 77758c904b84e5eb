// Warming a new module before it goes live (host/runtime/warm.ts) includes the rule figures'
// `profile` export: V8 compiles a wasm function at its first call, and the first sampled calls
// after a swap paid that for every profile loop on the main thread, inside a batch (up to 12 ms in
// one, the eval bench on a quiet machine). Each group is called in each shape the tally uses: whole,
// without a rule, one rule alone, and the loop alone once per source.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evtTypeId } from '../../host/abi/module.js';
import { loadRules } from '../../host/engine/index.js';
import { RuleCompiler, warmPlan } from '../../host/runtime/compiler.js';
import { warmInstance } from '../../host/runtime/warm.js';

const RULES = [
  '- rule: Open etc\n  desc: t\n  condition: evt.type = openat and fd.name startswith /etc\n  output: o\n  priority: NOTICE\n',
  '- rule: Open tmp\n  desc: t\n  condition: evt.type = openat and fd.name startswith /tmp\n  output: o\n  priority: NOTICE\n',
  '- rule: Exec sh\n  desc: t\n  condition: evt.type = execve and proc.name = sh\n  output: o\n  priority: NOTICE\n',
  '- rule: Secret read\n  desc: t\n  condition: ka.verb = get and ka.target.resource = secrets\n  output: o\n  priority: NOTICE\n  source: k8s_audit\n',
].join('');

async function compile(counters: boolean) {
  // no build deadline: on a loaded machine the build may take minutes
  const compiler = new RuleCompiler({ counters, timeoutMs: 0 });
  try {
    const c = await compiler.compile(loadRules([{ name: 'warm.yaml', text: RULES }]).ruleset.rules);
    assert.ok(c.ok, 'the rules compile');
    return c.compiled;
  } finally {
    await compiler.close();
  }
}

test('warming calls the profile export in every shape the rule figures use, for every counted group (slot 0: the audit group)', async () => {
  const compiled = await compile(true);
  const plan = warmPlan(compiled.generated);
  const groups = [evtTypeId('openat'), evtTypeId('execve'), 0];
  assert.equal([...(plan.profileSlots ?? [])].sort(), [...groups].sort());
  const instance = new WebAssembly.Instance(compiled.module, {});
  const real = instance.exports.profile as (...a: number[]) => number;
  const calls: string[] = [];
  const profile = (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number) => {
    calls.push(`${slot}/${skip}/${stride}`);
    return real(slot, skip, first, rec, stride, idx, m);
  };
  warmInstance({ ...instance.exports, profile }, plan, 1, 256);
  const expected = [`-1/-1/${plan.syscallStride}`, `-1/-1/${plan.auditStride}`];
  for (const slot of groups) for (const skip of [-1, 0, -2]) expected.push(`${slot}/${skip}/${slot === 0 ? plan.auditStride : plan.syscallStride}`);
  assert.equal([...calls].sort(), expected.sort());
});

test('a module without counters has no groups to profile nor profile loops, and warming does not call profile', async () => {
  const compiled = await compile(false);
  const plan = warmPlan(compiled.generated);
  assert.equal(plan.profileSlots, []);
  // the profile export keeps only its baseline loop (S_): no group's loops (S<slot>, O<slot>_) nor their rule lists
  const loops = /^function (?:S\d+|O\d+_?|Q\d+)\(/gm;
  assert.equal(compiled.generated.code.match(loops), null);
  assert.match(compiled.generated.code, /^function S_\(/m);
  assert.is((await compile(true)).generated.code.match(loops)?.length, 12, 'with counters: 4 functions for each of the 3 groups');
  const instance = new WebAssembly.Instance(compiled.module, {});
  let calls = 0;
  const profile = () => ++calls;
  warmInstance({ ...instance.exports, profile }, plan, 1, 256);
  assert.is(calls, 0);
});

test.run();
