// A container metadata record for tests (host/sources/container/record.ts's ContainerRecord):
// every field empty or false, as a runtime reports a bare container, with `more` on top.
import type { ContainerRecord } from '../../host/sources/container/index.js';

/** The record of container `fullId` (its 12-character id, docker, named n-<first 4>), overridden by `more`. */
export function containerRecord(fullId: string, more: Partial<ContainerRecord> = {}): ContainerRecord {
  return {
    id: fullId.slice(0, 12),
    fullId,
    type: 'docker',
    name: `n-${fullId.slice(0, 4)}`,
    image: '',
    imageId: '',
    imageRepository: '',
    imageTag: '',
    imageDigest: '',
    privileged: false,
    mounts: [],
    ip: '',
    hostPid: false,
    hostNetwork: false,
    hostIpc: false,
    labels: {},
    startTs: 0n,
    sandbox: false,
    ...more,
  };
}
