// The directory watch on a real directory: the first snapshot before start resolves, changes
// delivered as whole snapshots (sorted, only manifest files), bounds on file count and size,
// and a directory replaced under the same path picked up by the periodic rescan.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isManifestName, watchDirectory, type ManifestFile } from '../../host/resources/watch.js';

/** A watch whose snapshots can be awaited one by one. */
async function watched(dir: string, opts: { maxFiles?: number; maxFileBytes?: number; rescanMs?: number } = {}) {
  const snapshots: ManifestFile[][] = [];
  let wake: (() => void) | undefined;
  const w = await watchDirectory({
    dir,
    log: () => {},
    ...opts,
    onChange: async (files) => {
      snapshots.push(files);
      wake?.();
    },
  });
  /** The next snapshot matching `pred` (fails the test after 20 s instead of hanging). */
  const next = async (pred: (files: ManifestFile[]) => boolean): Promise<ManifestFile[]> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const hit = snapshots.find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no matching snapshot; got ${JSON.stringify(snapshots.map((s) => s.map((f) => basename(f.path))))}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  };
  return { w, snapshots, next };
}

const names = (files: ManifestFile[]) => files.map((f) => basename(f.path));

test('watch: manifest names', () => {
  assert.ok(isManifestName('a.yaml'));
  assert.ok(isManifestName('b.YML'));
  assert.ok(isManifestName('c.json'));
  assert.not.ok(isManifestName('.a.yaml.swp'));
  assert.not.ok(isManifestName('..data'));
  assert.not.ok(isManifestName('notes.txt'));
  assert.not.ok(isManifestName('a.yaml~'));
});

test('watch: the first snapshot is handled before start resolves; new, changed and deleted files follow', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-watch-'));
  writeFileSync(join(dir, 'b.yaml'), 'b: 1\n');
  writeFileSync(join(dir, 'a.yml'), 'a: 1\n');
  writeFileSync(join(dir, '.hidden.yaml'), 'x\n');
  writeFileSync(join(dir, 'readme.txt'), 'x\n');
  const { w, snapshots, next } = await watched(dir);
  assert.is(snapshots.length, 1);
  assert.equal(names(snapshots[0]!), ['a.yml', 'b.yaml']);
  assert.is(snapshots[0]![0]!.text, 'a: 1\n');
  writeFileSync(join(dir, 'c.yaml'), 'c: 1\n');
  await next((s) => names(s).includes('c.yaml'));
  writeFileSync(join(dir, 'c.yaml'), 'c: 2\n');
  await next((s) => s.some((f) => f.text === 'c: 2\n'));
  rmSync(join(dir, 'a.yml'));
  const last = await next((s) => !names(s).includes('a.yml'));
  assert.equal(names(last), ['b.yaml', 'c.yaml']);
  await w.idle();
  w.close();
});

test('watch: a burst of writes is coalesced and every snapshot is complete', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-watch-'));
  const { w, snapshots, next } = await watched(dir);
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, `f${String(i).padStart(2, '0')}.yaml`), `i: ${i}\n`);
  await next((s) => s.length === 20);
  await w.idle();
  assert.ok(snapshots.length < 21, `${snapshots.length} snapshots for 20 writes`);
  w.close();
});

test('watch: bounded — files over the size limit and past the count limit are reported, not read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-watch-'));
  writeFileSync(join(dir, 'a.yaml'), 'x'.repeat(100));
  writeFileSync(join(dir, 'b.yaml'), 'small\n');
  writeFileSync(join(dir, 'c.yaml'), 'small\n');
  const { w, snapshots } = await watched(dir, { maxFiles: 2, maxFileBytes: 50 });
  const [a, b, c] = snapshots[0]!;
  assert.is(a!.text, undefined);
  assert.match(a!.error!, 'not read: 100 bytes is over the limit of 50 bytes per manifest file');
  assert.is(b!.text, 'small\n');
  assert.match(c!.error!, 'not read: the directory has more than 2 manifest files');
  w.close();
});

test('watch: a directory replaced under the same path is picked up by the rescan', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rae-watch-'));
  const dir = join(root, 'resources');
  mkdirSync(dir);
  writeFileSync(join(dir, 'old.yaml'), 'old: 1\n');
  const { w, next } = await watched(dir, { rescanMs: 200 });
  const fresh = join(root, 'fresh');
  mkdirSync(fresh);
  writeFileSync(join(fresh, 'new.yaml'), 'new: 1\n');
  renameSync(dir, join(root, 'gone'));
  renameSync(fresh, dir);
  await next((s) => names(s).join() === 'new.yaml');
  // And the new directory is watched from then on.
  writeFileSync(join(dir, 'newer.yaml'), 'newer: 1\n');
  await next((s) => names(s).join() === 'new.yaml,newer.yaml');
  w.close();
});

test('watch: a missing directory is an empty snapshot, and its files count once it appears', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rae-watch-'));
  const dir = join(root, 'later');
  const { w, snapshots, next } = await watched(dir, { rescanMs: 200 });
  assert.equal(snapshots[0], []);
  mkdirSync(dir);
  writeFileSync(join(dir, 'x.yaml'), 'x: 1\n');
  await next((s) => names(s).join() === 'x.yaml');
  w.close();
});

test.run();
