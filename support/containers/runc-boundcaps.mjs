// Removes from an OCI runtime spec (config.json, or a process.json given to `runc exec`) every
// capability missing from this process's bounding set. Used by runc-boundcaps.sh.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
const bnd = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]}`);
// capability numbers from linux/capability.h, as runc names them
const NAMES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];
const allowed = (cap) => {
  const n = NAMES.indexOf(cap.replace(/^CAP_/, ''));
  return n < 0 || ((bnd >> BigInt(n)) & 1n) === 1n;
};
const spec = JSON.parse(readFileSync(file, 'utf8'));
const caps = (spec.process ?? spec).capabilities ?? {};
let changed = false;
for (const [set, list] of Object.entries(caps)) {
  const keep = (list ?? []).filter(allowed);
  if (keep.length !== (list ?? []).length) {
    caps[set] = keep;
    changed = true;
  }
}
if (changed) writeFileSync(file, JSON.stringify(spec));
