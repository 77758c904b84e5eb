// Capability sets as Falco renders thread.cap_inheritable/cap_permitted/cap_effective: consumes a
// 64-bit set (bit N = capability N, as the kernel's kernel_cap_t and /proc/PID/status CapEff hold
// it) and produces libsinsp's text. Semantics from falcosecurity/libs userspace/libsinsp/utils.cpp
// sinsp_utils::caps_to_string (called by sinsp_filtercheck_thread.cpp TYPE_CAP_*): the CAP_* names
// of the set bits in bit order, separated by one space, the empty string for an empty set; bits
// past the last name libsinsp knows (CAP_CHECKPOINT_RESTORE, 40) are not rendered. libsinsp takes
// the sets from the execve and clone exit events and from capset (parsers.cpp parse_capset_exit);
// the /proc scan reads CapInh/CapPrm/CapEff. Here: EXEC/FORK records (the probe reads the task's
// cred), CAPS records (a successful capset), PROC records (/proc/PID/status).

/** Capability names by bit (linux/capability.h, libsinsp's `capabilities` table). */
const CAP_NAMES: readonly string[] = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_LINUX_IMMUTABLE',
  'CAP_NET_BIND_SERVICE',
  'CAP_NET_BROADCAST',
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
  'CAP_IPC_LOCK',
  'CAP_IPC_OWNER',
  'CAP_SYS_MODULE',
  'CAP_SYS_RAWIO',
  'CAP_SYS_CHROOT',
  'CAP_SYS_PTRACE',
  'CAP_SYS_PACCT',
  'CAP_SYS_ADMIN',
  'CAP_SYS_BOOT',
  'CAP_SYS_NICE',
  'CAP_SYS_RESOURCE',
  'CAP_SYS_TIME',
  'CAP_SYS_TTY_CONFIG',
  'CAP_MKNOD',
  'CAP_LEASE',
  'CAP_AUDIT_WRITE',
  'CAP_AUDIT_CONTROL',
  'CAP_SETFCAP',
  'CAP_MAC_OVERRIDE',
  'CAP_MAC_ADMIN',
  'CAP_SYSLOG',
  'CAP_WAKE_ALARM',
  'CAP_BLOCK_SUSPEND',
  'CAP_AUDIT_READ',
  'CAP_PERFMON',
  'CAP_BPF',
  'CAP_CHECKPOINT_RESTORE',
];

const cache = new Map<bigint, string>();

/** libsinsp's text of a capability set (memoized: a host has few distinct sets). */
export function capsText(set: bigint): string {
  let s = cache.get(set);
  if (s !== undefined) return s;
  const names: string[] = [];
  for (let i = 0; i < CAP_NAMES.length; i++) if ((set >> BigInt(i)) & 1n) names.push(CAP_NAMES[i]!);
  s = names.join(' ');
  if (cache.size < 4096) cache.set(set, s);
  return s;
}

/** A /proc/PID/status capability line's value (16 hex digits) as a set; 0 when absent or malformed. */
export function parseCapHex(text: string | undefined): bigint {
  return text !== undefined && /^[0-9a-fA-F]{1,16}$/.test(text) ? BigInt(`0x${text}`) : 0n;
}
