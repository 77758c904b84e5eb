// Ways for a syscall action to do something sensitive without touching the machine: write below
// a system directory through an overlay whose upper layer is the action's temporary directory,
// seen only in a private mount namespace (the path the kernel reports is still /etc/..., the
// machine's /etc is never written); connect to a public-looking address that exists only on the
// loopback of a private network namespace; run as an unprivileged user; run a harmless program
// under the name a rule looks for (upstream's SpawnAsWithSymlink, falcosecurity/event-generator
// events/syscall/utils_linux.go).
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isRoot, mustRun, which } from './exec.js';

/** TEST-NET-2 (RFC 5737): public-looking, never routed; only ever put on a private namespace's loopback. */
export const PRIVATE_NET_ADDR = '198.51.100.7';

/** The user id of `nobody`, an unprivileged user that every Linux system has. */
const NOBODY = 65534;

/** Quotes a string for sh. */
export function shQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/** Why overlay actions cannot run here, or undefined. */
export function overlayUnavailable(): string | undefined {
  if (!isRoot()) return 'needs root (to mount an overlay in a private mount namespace)';
  const missing = ['unshare', 'mount', 'sh'].filter((p) => !which(p));
  return missing.length > 0 ? `needs ${missing.join(', ')} on PATH` : undefined;
}

/**
 * Runs `script` (sh) in a private mount namespace where each of `dirs` is an overlay whose upper
 * layer is in `tmp`: writes below them land in `tmp`, reads see the real files.
 */
export async function inOverlay(tmp: string, dirs: string[], script: string): Promise<void> {
  const mounts = dirs.map((dir, i) => {
    const upper = join(tmp, `overlay-${i}`, 'upper');
    const work = join(tmp, `overlay-${i}`, 'work');
    mkdirSync(upper, { recursive: true });
    mkdirSync(work, { recursive: true });
    return `mount -t overlay rae-event-generator -o ${shQuote(`lowerdir=${dir},upperdir=${upper},workdir=${work}`)} ${shQuote(dir)}`;
  });
  // unshare --mount makes every mount private first, so nothing propagates back to the machine.
  await mustRun(which('unshare')!, ['--mount', 'sh', '-ec', [...mounts, script].join('\n')]);
}

/** Why private-network actions cannot run here, or undefined. */
export function privateNetUnavailable(): string | undefined {
  if (!isRoot()) return 'needs root (to create a network namespace)';
  const missing = ['unshare', 'ip', 'sh', 'perl'].filter((p) => !which(p));
  return missing.length > 0 ? `needs ${missing.join(', ')} on PATH` : undefined;
}

/** Runs `argv` in a fresh network namespace whose loopback (up) also carries `addr`. */
export async function inPrivateNet(argv: string[], addr = PRIVATE_NET_ADDR): Promise<void> {
  const script = `ip link set lo up && ip addr add ${addr}/32 dev lo && exec "$@"`;
  await mustRun(which('unshare')!, ['--net', 'sh', '-ec', script, 'sh', ...argv], { timeoutMs: 20_000 });
}

/** `program` (from PATH) linked into `tmp` as `name`: run, it is a process called `name`. */
export function linkAs(tmp: string, program: string, name: string): string {
  const path = join(tmp, name);
  symlinkSync(which(program)!, path);
  return path;
}

let setprivChecked: string | undefined | null = null;
/**
 * Why asNobody cannot work here, or undefined: it needs root and util-linux's setpriv (busybox's
 * applet of that name, as in the engine's image, has no --reuid).
 */
export function nobodyUnavailable(): string | undefined {
  if (!isRoot()) return 'needs root (to become nobody)';
  if (setprivChecked === null) {
    const setpriv = which('setpriv');
    const help = setpriv ? spawnSync(setpriv, ['--help'], { encoding: 'utf8' }) : undefined;
    setprivChecked = !setpriv ? 'needs setpriv (util-linux) on PATH' : /--reuid/.test(`${help?.stdout}${help?.stderr}`) ? undefined : `${setpriv} has no --reuid (busybox's setpriv): needs util-linux's`;
  }
  return setprivChecked;
}

/** The argv that runs `argv` as `nobody` with no supplementary groups (see nobodyUnavailable). */
export function asNobody(argv: string[]): string[] {
  return [which('setpriv')!, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv];
}

/** Perl: listens on `addr:port`, connects to it, accepts, and exits 0 (inbound and outbound TCP). */
export function perlTcpLoop(addr: string, port: number): string {
  return `use IO::Socket::INET; my $l = IO::Socket::INET->new(LocalAddr => "${addr}", LocalPort => ${port}, Listen => 1, ReuseAddr => 1) or die "listen: $!"; my $c = IO::Socket::INET->new(PeerAddr => "${addr}", PeerPort => ${port}, Proto => "tcp") or die "connect: $!"; my $a = $l->accept or die "accept: $!"; exit 0`;
}

/** Perl: connects a UDP socket to `addr:port` and sends one datagram. */
export function perlUdpSend(addr: string, port: number): string {
  return `use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => "${addr}", PeerPort => ${port}, Proto => "udp") or die "udp: $!"; $s->send("rae-event-generator") or die "send: $!"; exit 0`;
}
