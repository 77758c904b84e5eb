// The record's renderings and selections, as Falco's container plugin has them (reference
// containers.md sections 10-11): image references split at the tag after the last '/', digests
// after '@'; labels over 100 characters dropped; mounts rendered source:dest:mode:rdwr:propagation;
// mount.*[KEY] a regex search, not a glob; k8s fields from io.kubernetes.* labels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { keptLabels, mountMatching, podFromLabels, renderMounts, splitImage, type ContainerMount } from '../../../host/sources/container/index.js';

const IMAGES: Array<[string, string, string, string]> = [
  ['localhost/rae-busybox:1.35', 'localhost/rae-busybox', '1.35', ''],
  ['busybox', 'busybox', '', ''],
  ['registry:5000/team/app', 'registry:5000/team/app', '', ''],
  ['registry:5000/team/app:v2', 'registry:5000/team/app', 'v2', ''],
  ['docker.io/library/nginx@sha256:abc', 'docker.io/library/nginx', '', 'sha256:abc'],
  ['nginx:1.25@sha256:abc', 'nginx', '1.25', 'sha256:abc'],
];
for (const [ref, repository, tag, digest] of IMAGES) {
  test(`splitImage ${ref}`, () => {
    assert.equal(splitImage(ref), { repository, tag, digest });
  });
}

const TMP: ContainerMount = { source: '/tmp/foo', dest: '/data', mode: '', rdwr: true, propagation: 'private' };
const ETC: ContainerMount = { source: '/etc', dest: '/host/etc', mode: 'ro', rdwr: false, propagation: 'rprivate' };

test('mounts render as source:dest:mode:rdwr:propagation, comma-separated', () => {
  assert.is(renderMounts([TMP, ETC]), '/tmp/foo:/data::true:private,/etc:/host/etc:ro:false:rprivate');
  assert.is(renderMounts([]), '');
});

test('mount keys are a regex search over the source (the plugin test: "/", "/tmp*", "foo", "tmp/[fo,ba]")', () => {
  for (const key of ['/', '/tmp*', 'foo', 'tmp/[fo,ba]']) assert.is(mountMatching([TMP], key, 'source'), TMP, key);
  assert.is(mountMatching([TMP, ETC], '^/etc$', 'source'), ETC);
  assert.is(mountMatching([TMP], '/proc', 'source'), undefined);
  assert.is(mountMatching([ETC], '/host', 'dest'), ETC);
  assert.is(mountMatching([ETC], '[', 'source'), undefined, 'a bad pattern selects nothing');
});

test('labels over 100 characters are dropped', () => {
  assert.equal(keptLabels({ a: 'x'.repeat(100), b: 'x'.repeat(101) }), { a: 'x'.repeat(100) });
});

test('k8s fields from io.kubernetes.* labels; none without pod name and namespace', () => {
  assert.equal(podFromLabels({ 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.sandbox.id': 'f'.repeat(64) }), {
    name: 'web',
    namespace: 'shop',
    uid: 'u1',
    sandboxId: 'f'.repeat(12),
    fullSandboxId: 'f'.repeat(64),
    labels: {},
    ip: '',
  });
  assert.is(podFromLabels({ 'io.kubernetes.pod.name': 'web' }), undefined);
});

test.run();
