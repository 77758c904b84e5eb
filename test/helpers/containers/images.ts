// Container images for tests, built offline: a busybox-static rootfs, a static `pause` binary
// compiled from pause.c, and an OCI image-layout archive around either (importable by
// `ctr images import`, `docker load` and `podman load`). Nothing is pulled from a registry.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The busybox image's reference in every runtime. */
export const BUSYBOX_IMAGE = 'localhost/rae-busybox:1.35';
/** The pause image's reference (the CRI sandbox image). */
export const PAUSE_IMAGE = 'localhost/rae-pause:3.9';

const PAUSE_C = fileURLToPath(new URL('./pause.c', import.meta.url));
const BUSYBOX = '/bin/busybox';

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

/** Tars a directory as root-owned entries. */
function tarDir(dir: string, out: string): void {
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '-C', dir, '-cf', out, '.']);
}

/** A busybox-static rootfs tar with /etc/passwd, /etc/group and an /etc/shadow to read. */
export function busyboxRootfs(dir: string): string {
  const root = join(dir, 'busybox-rootfs');
  for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'root']) mkdirSync(join(root, d), { recursive: true });
  copyFileSync(BUSYBOX, join(root, 'bin/busybox'));
  const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((a) => a && a !== 'busybox');
  for (const a of applets) symlinkSync('/bin/busybox', join(root, 'bin', a));
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\n');
  writeFileSync(join(root, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o600 });
  const out = join(dir, 'busybox-rootfs.tar');
  tarDir(root, out);
  return out;
}

/** A rootfs tar holding only /pause, compiled static from pause.c. */
export function pauseRootfs(dir: string): string {
  const root = join(dir, 'pause-rootfs');
  mkdirSync(root, { recursive: true });
  execFileSync('gcc', ['-Os', '-static', '-o', join(root, 'pause'), PAUSE_C]);
  execFileSync('strip', [join(root, 'pause')]);
  const out = join(dir, 'pause-rootfs.tar');
  tarDir(root, out);
  return out;
}

/** Options of an image's config (OCI image spec `config`). */
export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/**
 * Writes an OCI image-layout archive (https://github.com/opencontainers/image-spec/blob/main/image-layout.md)
 * with one uncompressed layer (the rootfs tar), its config and manifest, `index.json` naming the
 * image (`io.containerd.image.name`, read by `ctr images import`) and a docker-load `manifest.json`.
 */
export function writeOciArchive(rootfsTar: string, ref: string, out: string, config: ImageConfig = {}): string {
  const dir = `${out}.d`;
  const blobs = join(dir, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const put = (data: Buffer | string) => {
    const digest = sha256(data);
    writeFileSync(join(blobs, digest), data);
    return { digest: `sha256:${digest}`, size: Buffer.byteLength(data), path: `blobs/sha256/${digest}` };
  };
  const layer = put(readFileSync(rootfsTar));
  const cfg = put(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      created: '2024-01-01T00:00:00Z',
      config: {
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        Entrypoint: config.entrypoint ?? null,
        Cmd: config.cmd ?? ['/bin/sh'],
      },
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
    }),
  );
  const manifest = put(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: cfg.digest, size: cfg.size },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layer.digest, size: layer.size }],
    }),
  );
  const tag = ref.slice(ref.lastIndexOf(':') + 1);
  writeFileSync(join(dir, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: manifest.digest,
          size: manifest.size,
          annotations: { 'io.containerd.image.name': ref, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify([{ Config: cfg.path, RepoTags: [ref], Layers: [layer.path] }]));
  tarDir(dir, out);
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
