// container.id from the process's cgroup v2 path, for every shape of reference containers.md
// section 7 (the cgroupfs ones seen on this machine with docker, podman, CRI and ctr; the systemd
// ones as Falco's container plugin matchers list them) and the host shapes that must stay `host`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { containerId } from '../../../host/sources/syscall/thread-table.js';

const ID = 'e84d7d08813dbb0eb422fee4aa89595276d8cbe04aca079ec732085081a6db60';
const POD = '8105fe811cc5b3d1b1cd2c5e0d4bd2f6b0b1b2b3b4b5b6b7b8b9babbbcbdbebf';
const UID = '0b8f1c2e_5a51_4c4b_9a57_3f7c7f1e2a10';

const CASES: Array<[string, string, string]> = [
  ['docker, cgroupfs', `/docker/${ID}`, 'e84d7d08813d'],
  ['podman container', `/libpod_parent/libpod-${ID}`, 'e84d7d08813d'],
  ['podman container in a pod', `/libpod_parent/${POD}/libpod-${ID}`, 'e84d7d08813d'],
  ['CRI container, kubelet-style parent', `/kubepods/besteffort/pod0b8f1c2e-5a51-4c4b-9a57-3f7c7f1e2a10/${ID}`, 'e84d7d08813d'],
  ['CRI, no cgroupParent', `/k8s.io/${ID}`, 'e84d7d08813d'],
  ['plain containerd (ctr run)', '/k8s.io/rae-ctr-native', 'rae-ctr-nati'],
  ['plain containerd, short name', '/default/web', 'web'],
  ['systemd docker', `/system.slice/docker-${ID}.scope`, 'e84d7d08813d'],
  ['systemd podman', `/machine.slice/libpod-${ID}.scope`, 'e84d7d08813d'],
  ['systemd cri-containerd', `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID}.slice/cri-containerd-${ID}.scope`, 'e84d7d08813d'],
  ['systemd cri-o', `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID}.slice/crio-${ID}.scope`, 'e84d7d08813d'],
  ['containerd without SystemdCgroup', `/system.slice/containerd.service/kubepods-besteffort-pod${UID}.slice:cri-containerd:${ID}`, 'e84d7d08813d'],
  ['conmon, shims, daemons', '/', 'host'],
  ['empty (no cgroup v2 line)', '', 'host'],
  ['podman conmon scope', `/machine.slice/libpod-conmon-${ID}.scope`, 'host'],
  ['systemd service', '/system.slice/containerd.service', 'host'],
  ['systemd user slice', '/user.slice/user-0.slice', 'host'],
  ['one component', '/init.scope', 'host'],
  ['a 65-hex component', `/docker/${ID}0`, 'host'],
  ['name over 64 characters', `/default/${'n'.repeat(65)}`, 'host'],
];

for (const [name, path, want] of CASES) {
  test(`${name}: ${path || '(empty)'} -> ${want}`, () => {
    assert.is(Buffer.from(containerId(Buffer.from(path, 'latin1'))).toString('latin1'), want);
  });
}

test.run();
