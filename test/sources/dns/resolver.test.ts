// The DNS name table and the resolver without the kernel: the names a ruleset resolves
// (libsinsp resolves those of =, != and in), the table's answers as the translators look them
// up (an address held by two names gets the smaller), and libsinsp's refresh schedule (an
// unchanged answer doubles the interval up to the maximum, a changed one resets it), driven by
// refresh(now) with a counting lookup instead of timers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { MEM } from '../../../host/abi/module.js';
import { DnsResolver, DnsTable, domainNames } from '../../../host/sources/dns/index.js';

const memory = () => new WebAssembly.Memory({ initial: MEM.pages, maximum: MEM.pages });

test('dns names: the values of fd.*ip.name under =, != and in, of syscall rules', () => {
  const text = [
    ['a', 'evt.type = connect and fd.sip.name = "one.test"'],
    ['b', 'evt.type = connect and (fd.cip.name in (two.test, three.test) or fd.rip.name != four.test)'],
    ['c', 'evt.type = connect and fd.lip.name startswith "prefix" and fd.name = "not.a.name"'],
  ]
    .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: ${c}\n  output: x\n  priority: NOTICE\n`)
    .join('');
  const loaded = loadRules([{ name: 'r.yaml', text }]);
  assert.ok(loaded.ok);
  assert.equal(domainNames(loaded.ruleset.rules), ['four.test', 'one.test', 'three.test', 'two.test']);
});

test('dns table: each address has the smallest name that resolved to it; names no bound rule uses are dropped', () => {
  const t = new DnsTable();
  t.bind(memory(), ['b.test', 'a.test', 'v6.test']);
  t.set('b.test', ['10.0.0.1', '10.0.0.2']);
  t.set('a.test', ['10.0.0.2']);
  t.set('v6.test', ['2001:db8::1', '::ffff:10.0.0.1']);
  t.set('unused.test', ['10.0.0.9']);
  assert.equal(
    ['10.0.0.1', '10.0.0.2', '10.0.0.3', '2001:db8::1', '::ffff:10.0.0.1', '10.0.0.9'].map((a) => t.nameOf(a)),
    ['b.test', 'a.test', undefined, 'v6.test', 'v6.test', undefined],
  );
  const m2 = memory();
  t.bind(m2, ['b.test']);
  assert.equal(
    ['10.0.0.1', '10.0.0.2', '2001:db8::1'].map((a) => t.nameOf(a)),
    ['b.test', 'b.test', undefined],
  );
});

test("dns resolver: libsinsp's schedule: resolved at once, an unchanged answer doubles the interval up to the maximum, a change resets it", async () => {
  const answers = new Map([['svc.test', ['10.0.0.1']]]);
  let lookups = 0;
  const t = new DnsTable();
  t.bind(memory(), ['svc.test']);
  const settle = () => new Promise((r) => setImmediate(r));
  const r = new DnsResolver(t, { servers: [], refreshSeconds: 10, maxRefreshSeconds: 40, timeoutMs: 1000 }, async (n) => {
    lookups++;
    return answers.get(n) ?? [];
  });
  try {
    await settle();
    assert.is(lookups, 1, 'resolved when the rules are bound');
    assert.is(t.nameOf('10.0.0.1'), 'svc.test');
    const t0 = Date.now();
    const at = async (s: number) => {
      r.refresh(t0 + s * 1000);
      await settle();
      return lookups;
    };
    assert.is(await at(5), 1, 'not before 10 s');
    assert.is(await at(11), 2, 'again after 10 s');
    assert.is(await at(25), 2, 'unchanged: next after 20 s');
    assert.is(await at(32), 3);
    assert.is(await at(32 + 35), 3, 'unchanged again: 40 s, the maximum');
    assert.is(await at(32 + 41), 4);
    answers.set('svc.test', ['10.0.0.7']);
    assert.is(await at(32 + 41 + 41), 5, 'still at the maximum');
    assert.is(t.nameOf('10.0.0.7'), 'svc.test', 'the new answer is in the table');
    assert.is(t.nameOf('10.0.0.1'), undefined, 'the old one is gone');
    assert.is(await at(32 + 41 + 41 + 11), 6, 'changed: back to 10 s');
    answers.delete('svc.test');
    assert.is(await at(32 + 41 + 41 + 11 + 11), 6, 'unchanged: 20 s');
    assert.is(await at(32 + 41 + 41 + 11 + 21), 7);
    assert.is(t.nameOf('10.0.0.7'), undefined, 'a name that no longer resolves has no address (libsinsp: an empty set)');
  } finally {
    r.stop();
  }
});

test.run();
