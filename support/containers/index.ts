// Real container runtimes for tests, each a private instance in a temp dir, with offline images
// and complete teardown. See README in this folder for the API in one place.
export { buildImages, BUSYBOX_IMAGE, imageToolsPresent, PRIVILEGED_SLEEPER, type TestImages } from './images.js';
export { startContainerd, containerdPresent, type PrivateContainerd } from './containerd.js';
export { CriAdmin, type Pod, type ContainerSpec } from './cri-admin.js';
export { startDockerd, dockerPresent, type PrivateEngine } from './docker.js';
export { startPodman, podmanPresent } from './podman.js';
export { leftovers, mountsUnder, netnsNames, processesNaming, removeCgroups } from './host-state.js';

/** Whether the runtimes can be started here: root, and the packages of scripts/setup.sh --for test. */
export function runtimesAvailable(): boolean {
  return process.getuid?.() === 0;
}
