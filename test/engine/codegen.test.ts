// Code generation: a golden file of the AssemblyScript generated for a small ruleset (regenerate
// with UPDATE_GOLDEN=1 and review the diff), deterministic output for the corpus, the record
// layout and thread use it reports, and the error for a construct it cannot compile.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateModule } from '../../host/engine/codegen/index.js';
import { renderDiagnostic } from '../../host/engine/diagnostics.js';
import { loadRules } from '../../host/engine/index.js';
import { corpusText } from '../../support/corpus.js';

const RULES = `
- list: shells
  items: [bash, sh, zsh]
- rule: shell reads shadow
  desc: d
  condition: evt.type in (open, openat) and evt.is_open_read = true and fd.name in (/etc/shadow, /etc/gshadow) and proc.name in (shells) and not proc.pname = sshd
  output: o
  priority: WARNING
- rule: curl pipes
  desc: d
  condition: evt.type = execve and (proc.cmdline contains "| sh" or proc.cmdline icontains "BASE64 -d") and fd.name startswith /tmp and proc.aname[2] glob "*ssh*"
  output: o
  priority: NOTICE
- rule: ancestors and endpoints
  desc: d
  condition: evt.type = connect and (proc.aname in (nginx) or fd.net = 10.0.0.0/8 or fd.sport >= 8000) and user.uid != 0 and fd.name pmatch (/var/run, /usr/*/x)
  output: o
  priority: ERROR
`;
const GOLDEN = 'test/golden/codegen/small.as.txt';

test('codegen: the generated AssemblyScript for a small ruleset (golden)', () => {
  const loaded = loadRules([{ name: 'r.yaml', text: RULES }]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const g = generateModule(loaded.ruleset.rules);
  assert.equal(g.errors, []);
  const code = g.module!.code;
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, code);
  assert.ok(existsSync(GOLDEN), `missing ${GOLDEN} (run with UPDATE_GOLDEN=1 and review)`);
  assert.fixture(code, readFileSync(GOLDEN, 'utf8'));
});

test('codegen: layout and thread use of the small ruleset', () => {
  const g = generateModule(loadRules([{ name: 'r.yaml', text: RULES }]).ruleset.rules).module!;
  assert.equal(
    g.layouts.syscall.slots.map((s) => `${s.ref.canonical}${s.list ? '[]' : ''}@${s.offset}:${s.kind}`),
    ['evt.is_open_read@16:bool', 'fd.name@24:str', 'fd.net[]@32:str', 'fd.sport@40:u64'],
  );
  assert.is(g.layouts.syscall.stride, 48);
  assert.is(g.layouts.k8s_audit.stride, 16);
  assert.equal(g.threadUse, { bases: ['proc.cmdline', 'proc.name', 'user.uid'], levels: 2, walk: true });
  assert.is(g.maxGroup, 1);
});

test('codegen: the output is deterministic for the whole corpus', () => {
  const files = ['falco_rules.yaml', 'falco-incubating_rules.yaml', 'falco-sandbox_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) }));
  const a = generateModule(loadRules(files).ruleset.rules);
  const b = generateModule(loadRules(files).ruleset.rules);
  assert.equal(a.errors, []);
  assert.is(a.module!.hash, b.module!.hash);
  assert.is(a.module!.code, b.module!.code);
});

test('codegen: evt.type tests are decided per rule; disjuncts with the same first leaf share it', () => {
  const text = `- rule: f\n  desc: d\n  condition: evt.type in (open, openat) and ((evt.type = open and proc.name = a and fd.name = x) or (evt.type = open and proc.name = a and fd.name = y) or evt.type = execve)\n  output: o\n  priority: WARNING\n`;
  const g = generateModule(loadRules([{ name: 'r.yaml', text }]).ruleset.rules).module!;
  const body = /function R0\(e: usize\): bool \{\n {2}return (.*);\n\}/.exec(g.code)?.[1];
  // the rule only runs for open (its event types): every evt.type test is decided; proc.name = a is tested once
  assert.is(body, '(L0(e) && (L1(e) || L2(e)))');
  const mixed = `- rule: m\n  desc: d\n  condition: (evt.type = open and proc.name = a) or (evt.type = execve and proc.name = b)\n  output: o\n  priority: WARNING\n`;
  const m = generateModule(loadRules([{ name: 'r.yaml', text: mixed }]).ruleset.rules).module!;
  // runs for open and execve: each type test keeps its check
  assert.match(m.code, 'return (((load<u32>(e) == 202) && L0(e)) || ((load<u32>(e) == 51) && L1(e)));');
});

test('codegen: or-ed =/in tests of one string field are one set test; a 10,000-term rule becomes functions of bounded size', () => {
  const text = `- rule: s\n  desc: d\n  condition: evt.type = open and (proc.name = a or fd.name = /x or proc.name in (b, c) or proc.pid = 3 or proc.name = d)\n  output: o\n  priority: WARNING\n`;
  const g = generateModule(loadRules([{ name: 'r.yaml', text }]).ruleset.rules).module!;
  assert.is(/function R0\(e: usize\): bool \{\n {2}return (.*);\n\}/.exec(g.code)?.[1], '(L0(e) || L1(e) || L2(e))');
  assert.match(g.code, '// proc.name in a, b, c, d\n');
  const ops = [(i: number) => `proc.name=a${i}`, (i: number) => `fd.name=/x${i}`, (i: number) => `proc.cmdline startswith s${i}-`, (i: number) => `fd.name contains /c${i}/`, (i: number) => `proc.pid=${i}`];
  const big = `- rule: b\n  desc: d\n  condition: evt.type = open and (${Array.from({ length: 10_000 }, (_, i) => ops[i % 5]!(i)).join(' or ')})\n  output: o\n  priority: WARNING\n`;
  const m = generateModule(loadRules([{ name: 'r.yaml', text: big }]).ruleset.rules).module!;
  const returns = m.code.split('\n').filter((l) => l.startsWith('  return ('));
  assert.ok(returns.length > 10, 'split into functions');
  assert.ok(Math.max(...returns.map((l) => l.length)) <= 1024 + 12, 'no expression over the bound');
  // the 4,000 string-equality terms are two set tests (one per field), the 6,000 others one leaf each
  assert.is((m.code.match(/^@inline function L\d+/gm) ?? []).length, 6002);
});

test('codegen: a construct it cannot compile fails its rule at load, located through the macro (RAE_ERR_UNSUPPORTED); the other rules load', () => {
  const text = `- macro: long_name\n  condition: proc.name regex "[a-z]{600}"\n- rule: re\n  desc: d\n  condition: evt.type = open and long_name\n  output: o\n  priority: WARNING\n- rule: ok\n  desc: d\n  condition: evt.type = open and proc.name regex "(a+)+b|[ab]*a[ab]{8}"\n  output: o\n  priority: WARNING\n`;
  const loaded = loadRules([{ name: 'r.yaml', text }]);
  assert.not.ok(loaded.ok);
  assert.equal(
    loaded.ruleset.rules.map((r) => r.name),
    ['ok'],
  );
  assert.is(
    loaded.diagnostics.map((d) => renderDiagnostic(d, loaded.sources)).join('\n'),
    [
      "r.yaml:2:14: error RAE_ERR_UNSUPPORTED (Condition not supported by the compiled evaluator): regex '[a-z]{600}' needs 600 positions, more than the 512 the compiled evaluator runs",
      '    In rules content: (r.yaml:1:1)',
      "    rule 're': (r.yaml:3:3)",
      '    rule condition: (r.yaml:5:14)',
      "    macro 'long_name': (r.yaml:1:3)",
      '    macro condition: (r.yaml:2:14)',
      "    condition expression 'proc.name regex \"[a-': (r.yaml:2:14)",
      '  2 |   condition: proc.name regex "[a-z]{600}"',
      '    |              ^',
    ].join('\n'),
  );
  assert.equal(generateModule(loaded.ruleset.rules).errors, [], 'what loads compiles');
});

test.run();
