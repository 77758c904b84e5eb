// A container record as the metadata cache gives it (a privileged container of pod shop/web-7d4b9c
// with the host's /proc mounted), for the tests of what the container table and the rules read.
import type { ContainerRecord } from '../../../host/sources/container/index.js';

/** A privileged containerd container of pod shop/web-7d4b9c (label app=web). */
export const NGINX: ContainerRecord = {
  id: '7f43ab7d6179',
  fullId: `7f43ab7d6179${'0'.repeat(52)}`,
  type: 'containerd',
  name: 'nginx',
  image: 'localhost/rae-busybox:1.35',
  imageId: '71752bd627c8',
  imageRepository: 'localhost/rae-busybox',
  imageTag: '1.35',
  imageDigest: '',
  privileged: true,
  mounts: [{ source: '/proc', dest: '/host/proc', mode: '', rdwr: false, propagation: 'private' }],
  ip: '',
  hostPid: false,
  hostNetwork: true,
  hostIpc: false,
  labels: {},
  startTs: 0n,
  sandbox: false,
  pod: { name: 'web-7d4b9c', namespace: 'shop', uid: 'u-1', sandboxId: '765d94c06b07', fullSandboxId: '765d94c06b07ff', labels: { app: 'web' }, ip: '' },
};
