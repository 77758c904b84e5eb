// The container table in a module's memory (host/sources/container/table.ts): an id's entry is
// allocated on first sight with nothing present (fields missing until the metadata arrives), the
// cache's record fills it, forgetting empties it and frees it for another id, a module's keyed
// fields are written in its key order, host processes read container.name 'host', and a rebind
// (hot swap to a new module's memory) writes every entry again. containerFields() reads back
// what the compiled rules read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CTR, MEM, STATE, type ContainerKey } from '../../../host/abi/module.js';
import { ContainerTable, containerFields } from '../../../host/sources/container/index.js';
import { NGINX } from './record-fixture.js';

const memory = () => new WebAssembly.Memory({ initial: MEM.pages, maximum: MEM.pages });
const KEYS: ContainerKey[] = [
  { canonical: 'k8s.pod.label[app]', name: 'k8s.pod.label', arg: 'app' },
  { canonical: 'container.mount.dest[/proc*]', name: 'container.mount.dest', arg: '/proc*' },
  { canonical: 'container.label[none]', name: 'container.label', arg: 'none' },
];

test('an entry is missing everything until the record arrives, then carries it; forget empties and frees it', () => {
  const m = memory();
  const table = new ContainerTable();
  const asked: string[] = [];
  table.onNewId = (id) => asked.push(id);
  table.bind(m, KEYS);
  const at = table.slotFor(NGINX.id);
  assert.ok(at >= STATE.containers && at + CTR.size <= MEM.stateBase + MEM.stateSize);
  assert.equal(asked, [NGINX.id]);
  assert.equal(containerFields(m, at, KEYS), {});
  table.learn(NGINX);
  const f = containerFields(m, at, KEYS);
  assert.is(f['container.name'], 'nginx');
  assert.is(f['container.image.repository'], 'localhost/rae-busybox');
  assert.is(f['container.image.tag'], '1.35');
  assert.is(f['container.privileged'], true);
  assert.is(f['container.host_network'], true);
  assert.is(f['container.host_pid'], false);
  assert.is(f['container.mounts'], '/proc:/host/proc::false:private');
  assert.is(f['k8s.pod.name'], 'web-7d4b9c');
  assert.is(f['k8s.ns.name'], 'shop');
  assert.is(f['k8s.pod.label[app]'], 'web');
  assert.is(f['container.mount.dest[/proc*]'], '/host/proc');
  assert.is(f['container.label[none]'], undefined, 'an absent label is missing');
  assert.is(f['container.image.digest'], undefined, 'an empty value is missing');
  assert.is(table.slotFor(NGINX.id), at, 'one entry per id');
  table.forget(NGINX.id);
  assert.equal(containerFields(m, at, KEYS), {});
  assert.is(table.slotFor('aaaaaaaaaaaa'), at, 'a forgotten entry is reused');
});

test('a record learned before its id is seen fills the entry at once; host is named host; a rebind rewrites every entry', () => {
  const table = new ContainerTable();
  table.bind(memory(), []);
  table.learn({ ...NGINX, mounts: [] });
  const at = table.slotFor(NGINX.id);
  const host = table.slotFor('host');
  const m2 = memory();
  table.bind(m2, KEYS);
  const f = containerFields(m2, at, KEYS);
  assert.is(f['container.name'], 'nginx');
  assert.is(f['container.mount.dest[/proc*]'], 'N/A', 'no mount matches: N/A, as the sandbox rules test for');
  assert.equal(containerFields(m2, host, KEYS), { 'container.name': 'host' });
});

test('the table is bounded: past its entries an id gets none (counted)', () => {
  const table = new ContainerTable();
  table.bind(memory(), []);
  for (let i = 0; i < CTR.slots; i++) assert.ok(table.slotFor(i.toString(16).padStart(12, '0')) !== 0);
  assert.is(table.slotFor('ffffffffffff'), 0);
  assert.is(table.dropped, 1);
});

test('a value that does not fit the entry is missing and counted; the values before it stay, and a keyed value after it still fits', () => {
  const m = memory();
  const table = new ContainerTable();
  table.bind(m, KEYS);
  const at = table.slotFor(NGINX.id);
  table.learn({ ...NGINX, image: `localhost/${'x'.repeat(CTR.size)}` });
  const f = containerFields(m, at, KEYS);
  assert.is(table.truncated, 1);
  assert.is(f['container.image'], undefined);
  assert.is(f['container.name'], 'nginx');
  assert.is(f['container.image.repository'], 'localhost/rae-busybox');
  assert.is(f['k8s.pod.label[app]'], 'web');
});

test.run();
