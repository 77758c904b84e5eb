// Differential test over generated conditions: random rules (fast-check) mixing every operator
// the compiled evaluator supports (=, !=, in, regex, contains, icontains, startswith, endswith,
// glob, iglob, pmatch, exists, intersects, field-to-field, transformers, ancestors by index and
// walk, endpoint IPs and networks, numbers, booleans) under and/or/not, loaded through the real
// front end, then 100,000 random events compared with the reference interpreter. About 1 string
// value in 100 is long (past the old 4096-byte cut, up to 50 KiB: support/differential.ts).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../host/engine/index.js';
import { collectPools, compileAll, compiledMatches, eventArb, oracle, toEvents } from '../../support/differential.js';

const EVENTS = 100_000;
const BATCH = 1000;
const S = ['bash', 'sh', 'nginx', '/etc/shadow', '/usr/bin/python3', 'cat', 'SUDO', 'a*b', '/tmp/x', ''];
const leaf = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        'proc.name',
        'proc.pname',
        'proc.aname[2]',
        'fd.name',
        'proc.cmdline',
        'user.name',
        'proc.exepath',
        'container.id',
        'fd.directory',
        'tolower(proc.name)',
        'toupper(fd.name)',
        'basename(fd.name)',
        'proc.pexe',
        'concat(proc.name, "/", basename(fd.name))',
        'tolower(proc.cmdline)',
      ),
      fc.constantFrom('=', '!=', 'contains', 'icontains', 'startswith', 'endswith', 'glob', 'iglob'),
      fc.constantFrom(...S.slice(0, 9)),
    )
    .map(([f, op, v]) => `${f} ${op} "${v}"`),
  fc
    .tuple(fc.constantFrom('proc.name', 'proc.aname', 'proc.aexe', 'fd.name', 'proc.pname'), fc.uniqueArray(fc.constantFrom(...S.slice(0, 9)), { minLength: 1, maxLength: 4 }))
    .map(([f, vs]) => `${f} in (${vs.map((v) => `"${v}"`).join(', ')})`),
  fc.tuple(fc.constantFrom('fd.name', 'proc.exepath'), fc.constantFrom('/etc', '/usr/*/python3', '/tmp')).map(([f, p]) => `${f} pmatch (${p}, /var/run)`),
  fc
    .tuple(fc.constantFrom('proc.pid', 'proc.ppid', 'proc.apid[2]', 'user.uid', 'evt.rawres', 'fd.num', 'len(proc.name)', 'proc.vpid', 'len(fd.name)'), fc.constantFrom('=', '!=', '<', '<=', '>', '>='), fc.integer({ min: 0, max: 5000 }))
    .map(([f, op, n]) => `${f} ${op} ${n}`),
  fc.tuple(fc.constantFrom('evt.is_open_read', 'evt.is_open_write', 'proc.is_exe_upper_layer'), fc.boolean()).map(([f, b]) => `${f} = ${b}`),
  fc.tuple(fc.constantFrom('fd.sip', 'fd.ip', 'fd.cip'), fc.constantFrom('10.0.0.1', '192.168.1.7')).map(([f, ip]) => `${f} = ${ip}`),
  fc.tuple(fc.constantFrom('fd.net', 'fd.snet'), fc.constantFrom('10.0.0.0/8', '192.168.1.0/24', '10.1.2.3/31')).map(([f, n]) => `${f} = ${n}`),
  fc.tuple(fc.constantFrom('fd.port', 'fd.sport'), fc.constantFrom('=', '!='), fc.constantFrom(22, 443, 8080)).map(([f, op, p]) => `${f} ${op} ${p}`),
  fc.constantFrom('proc.name = val(proc.pname)', 'proc.name != val(proc.pname)', 'fd.name startswith val(proc.cwd)', 'proc.pid < val(proc.ppid)', 'proc.cmdline contains val(proc.name)'),
  fc.constantFrom('proc.aname exists', 'proc.pname exists', 'fd.sip exists', 'user.name exists', 'proc.aname[3] exists'),
  fc.constantFrom('evt.type = execve', 'evt.type != openat', 'evt.type in (open, connect)'),
  fc.tuple(fc.constantFrom('proc.name', 'fd.name', 'proc.cmdline', 'proc.pname'), fc.constantFrom('ba.*', '/etc/[a-z]+', '(sh|bash)', '.*py(thon)?[0-9]?', '[^/]*', 'c?at|[A-Z]+.*')).map(([f, p]) => `${f} regex "${p}"`),
);
const cond: fc.Arbitrary<string> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('and'), tie('or'), tie('not')),
  and: fc.tuple(tie('node'), tie('node')).map(([a, b]) => `(${a} and ${b})`),
  or: fc.tuple(tie('node'), tie('node')).map(([a, b]) => `(${a} or ${b})`),
  not: tie('node').map((a) => `not ${a}`),
})).node as fc.Arbitrary<string>;

test(`differential (generated conditions): 80 random rules agree with the interpreter on ${EVENTS} events`, async () => {
  const conds = fc.sample(cond, { numRuns: 80, seed: 7 });
  const yaml = conds.map((c, i) => `- rule: g${i}\n  desc: generated\n  condition: evt.type in (open, openat, execve, connect) and ${c}\n  output: g${i}\n  priority: WARNING\n`).join('\n');
  const loaded = loadRules([{ name: 'generated.yaml', text: yaml }]);
  assert.ok(
    loaded.ok,
    loaded.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => d.message)
      .join('\n'),
  );
  const rules = loaded.ruleset.rules;
  assert.is(rules.length, 80);
  const module = await compileAll(rules);
  const pools = collectPools(rules);
  for (const f of ['proc.cwd', 'proc.exe']) if (!pools.has(f)) pools.set(f, { kind: 'str', values: ['/etc', '/tmp', 'bash'] });
  const arb = fc.array(eventArb(pools, 'syscall', ['open', 'openat', 'execve', 'connect'], new Set()), { minLength: BATCH, maxLength: BATCH });
  let matched = 0;
  fc.assert(
    fc.property(arb, (objs) => {
      const events = toEvents(objs, 'syscall');
      const want = oracle(rules, events);
      matched += want.length;
      assert.equal(compiledMatches(module, events), want);
    }),
    { numRuns: EVENTS / BATCH, seed: Number(process.env.DIFF_SEED ?? 424242) },
  );
  assert.ok(matched > EVENTS / 10, `only ${matched} matches`);
  process.stderr.write(`differential (generated): 80 rules, ${EVENTS} events, ${matched} matches\n`);
});

test.run();
