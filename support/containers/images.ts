// Container images for tests, built offline: a busybox-static rootfs, a static `pause` binary
// compiled from pause.c, and an OCI image-layout archive around either (importable by
// `ctr images import`, `docker load` and `podman load`; host/generator/image.ts, which the event
// generator's --in-container uses too). Nothing is pulled from a registry.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUSYBOX, busyboxRootfs, tarDir, writeOciArchive } from '../../host/generator/image.js';

/** The busybox image's reference in every runtime. */
export const BUSYBOX_IMAGE = 'localhost/rae-busybox:1.35';

/**
 * The privileged "nginx" container of the container tests' pod (a busybox sleeping): the host's
 * /etc and /proc mounted read-only, as a sensitive-mount container would have them.
 */
export const PRIVILEGED_SLEEPER = {
  name: 'nginx',
  image: BUSYBOX_IMAGE,
  command: ['sleep'],
  args: ['3600'],
  privileged: true,
  mounts: [
    { containerPath: '/host/etc', hostPath: '/etc', readonly: true },
    { containerPath: '/host/proc', hostPath: '/proc', readonly: true },
  ],
};
/** The pause image's reference (the CRI sandbox image). */
export const PAUSE_IMAGE = 'localhost/rae-pause:3.9';

const PAUSE_C = fileURLToPath(new URL('./pause.c', import.meta.url));

/** The archives one test builds: plain rootfs tars (for `docker import`) and OCI archives. */
export interface TestImages {
  busyboxRootfs: string;
  busyboxOci: string;
  pauseRootfs: string;
  pauseOci: string;
}

/** Whether the tools the images need are on this machine (busybox-static, gcc with libc.a, tar). */
export function imageToolsPresent(): boolean {
  try {
    execFileSync(BUSYBOX, ['true']);
    execFileSync('gcc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A rootfs tar holding only /pause, compiled static from pause.c. */
function pauseRootfs(dir: string): string {
  const root = join(dir, 'pause-rootfs');
  mkdirSync(root, { recursive: true });
  execFileSync('gcc', ['-Os', '-static', '-o', join(root, 'pause'), PAUSE_C]);
  execFileSync('strip', [join(root, 'pause')]);
  const out = join(dir, 'pause-rootfs.tar');
  tarDir(root, out);
  return out;
}

/** Builds the busybox and pause images into `dir` (about 1-2 s: gcc and tar). */
export function buildImages(dir: string): TestImages {
  mkdirSync(dir, { recursive: true });
  const busybox = busyboxRootfs(dir);
  const pause = pauseRootfs(dir);
  return {
    busyboxRootfs: busybox,
    busyboxOci: writeOciArchive(busybox, BUSYBOX_IMAGE, join(dir, 'rae-busybox.oci.tar'), { cmd: ['/bin/sh'] }),
    pauseRootfs: pause,
    pauseOci: writeOciArchive(pause, PAUSE_IMAGE, join(dir, 'rae-pause.oci.tar'), { entrypoint: ['/pause'], cmd: [] }),
  };
}
