// The event generator's container image, built offline from the node's own busybox-static: a
// rootfs tar (busybox and its applet links, /etc/passwd, /etc/group, an /etc/shadow to read) and an
// OCI image-layout archive around it that `docker load`, `podman load` and `ctr images import`
// accept, and the rootfs as a directory for the cgroup boxes (cgroup-box.ts). Nothing is pulled
// from a registry. The test helpers (support/containers/images.ts) build their images with
// the same functions.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's busybox-static (the `busybox` package's binary is dynamic and cannot run alone in an image). */
export const BUSYBOX = '/bin/busybox';

/** Why the busybox image cannot be built here, or undefined. */
export function busyboxUnavailable(): string | undefined {
  try {
    execFileSync(BUSYBOX, ['true'], { stdio: 'ignore' });
  } catch {
    return `needs ${BUSYBOX} (Debian busybox-static) for the container image`;
  }
  // A static binary has no program interpreter (PT_INTERP): "/lib64/ld-linux" or similar in its first bytes.
  const head = readFileSync(BUSYBOX).subarray(0, 4096).toString('latin1');
  return head.includes('/ld-linux') || head.includes('/ld-musl') ? `${BUSYBOX} is dynamically linked: needs busybox-static for the container image` : undefined;
}

/** Tars a directory as root-owned entries. */
export function tarDir(dir: string, out: string): void {
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '-C', dir, '-cf', out, '.']);
}

/** A busybox-static rootfs tar with /etc/passwd, /etc/group and an /etc/shadow to read. */
export function busyboxRootfs(dir: string): string {
  const out = join(dir, 'busybox-rootfs.tar');
  tarDir(busyboxRootfsDir(dir), out);
  return out;
}

/** The busybox-static rootfs as a directory (`dir`/busybox-rootfs): the image's layer, and the lower layer of a cgroup box (cgroup-box.ts). */
export function busyboxRootfsDir(dir: string): string {
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
  return root;
}

/** Options of an image's config (OCI image spec `config`). */
export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** The OCI architecture name of this machine. */
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

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
      architecture: ARCH[process.arch] ?? process.arch,
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
