// The directory watch on a real directory: the first snapshot before start resolves, changes
// delivered as whole snapshots (sorted, only manifest files), bounds on file count and size,
// a directory replaced under the same path picked up by the periodic rescan, and what is read:
// links out of the directory and non-regular files refused, a ConfigMap's ..data links followed.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isManifestName, watchDirectory, type ManifestFile } from '../../host/resources/watch.js';
import { tempDir } from '../helpers/temp-dir.js';

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
  /** The next snapshot matching `pred` (fails the test after 300 s instead of hanging). */
  const next = async (pred: (files: ManifestFile[]) => boolean): Promise<ManifestFile[]> => {
    const deadline = Date.now() + 300_000;
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
  const dir = tempDir('rae-watch-');
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
  const dir = tempDir('rae-watch-');
  const { w, snapshots, next } = await watched(dir);
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, `f${String(i).padStart(2, '0')}.yaml`), `i: ${i}\n`);
  await next((s) => s.length === 20);
  await w.idle();
  assert.ok(snapshots.length < 21, `${snapshots.length} snapshots for 20 writes`);
  w.close();
});

test('watch: bounded — files over the size limit and past the count limit are reported, not read', async () => {
  const dir = tempDir('rae-watch-');
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
  const root = tempDir('rae-watch-');
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
  const root = tempDir('rae-watch-');
  const dir = join(root, 'later');
  const { w, snapshots, next } = await watched(dir, { rescanMs: 200 });
  assert.equal(snapshots[0], []);
  mkdirSync(dir);
  writeFileSync(join(dir, 'x.yaml'), 'x: 1\n');
  await next((s) => names(s).join() === 'x.yaml');
  w.close();
});

/** A stand-in for a copy of /etc/shadow: 0600, outside the watched directory. */
const SHADOW = 'root:$6$secretsalt$Xk9vQ2hP0aL7mN3bR5tY8uW1zC4dE6fG:19700:0:99999:7:::\n';

test('watch: a link to a file outside the directory is refused unread, naming only the link', async () => {
  const root = tempDir('rae-watch-');
  const dir = join(root, 'resources');
  mkdirSync(dir);
  const secret = join(root, 'shadow');
  writeFileSync(secret, SHADOW);
  chmodSync(secret, 0o600);
  symlinkSync(secret, join(dir, 'x.yaml'));
  symlinkSync('../shadow', join(dir, 'rel.yaml'));
  symlinkSync(join(root, 'nothing'), join(dir, 'dangling.yaml'));
  writeFileSync(join(dir, 'ok.yaml'), 'ok: 1\n');
  const { w, snapshots } = await watched(dir);
  const refusal = 'not read: it is a link to a file outside the resources directory (links may only point inside it)';
  assert.equal(snapshots[0], [
    { path: join(dir, 'dangling.yaml'), error: 'not read: it is a link to nothing' },
    { path: join(dir, 'ok.yaml'), text: 'ok: 1\n' },
    { path: join(dir, 'rel.yaml'), error: refusal },
    { path: join(dir, 'x.yaml'), error: refusal },
  ]);
  w.close();
});

test('watch: non-regular files are refused without being opened (a FIFO would block a read)', async () => {
  const dir = tempDir('rae-watch-');
  execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
  mkdirSync(join(dir, 'dir.yaml'));
  const { w, snapshots } = await watched(dir);
  assert.equal(snapshots[0], [
    { path: join(dir, 'dir.yaml'), error: 'not read: not a regular file' },
    { path: join(dir, 'pipe.yaml'), error: 'not read: not a regular file' },
  ]);
  w.close();
});

test('watch: a ConfigMap volume (links into ..data, swapped atomically) is read and its swap picked up', async () => {
  const dir = tempDir('rae-watch-');
  // The kubelet's layout (atomic_writer.go): ..<timestamp>/ holds the files, ..data links to it,
  // and each key is a top-level link through ..data.
  const version = (stamp: string, text: string) => {
    mkdirSync(join(dir, stamp));
    writeFileSync(join(dir, stamp, 'rules.yaml'), text);
    symlinkSync(stamp, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  version('..2024_11_25_00_00_00.000000001', 'v: 1\n');
  symlinkSync('..data/rules.yaml', join(dir, 'rules.yaml'));
  const { w, snapshots, next } = await watched(dir, { rescanMs: 200 });
  assert.equal(snapshots[0], [{ path: join(dir, 'rules.yaml'), text: 'v: 1\n' }]);
  version('..2024_11_25_00_01_00.000000002', 'v: 2\n');
  rmSync(join(dir, '..2024_11_25_00_00_00.000000001'), { recursive: true });
  assert.equal(await next((s) => s[0]?.text === 'v: 2\n'), [{ path: join(dir, 'rules.yaml'), text: 'v: 2\n' }]);
  w.close();
});

test.run();
