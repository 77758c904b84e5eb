// What the native translator (probes/addon/ingest.c) is given: the addon, when it loads and
// speaks ingest-abi.ts's numbers; the constant strings (errno names, fd types, socket domains,
// ptrace requests, open flags, fd.l4proto and mode names, evt.dir/source/hostname) as a blob and
// its (offset, length) table; and a module's plan as int32 words (ingest.h RAE_IP_*).
import { loadNative, type NativeIngest } from '../addon.js';
import { ERRNO } from '../fields.js';
import { DOMAINS, MODE_FLAGS, OPEN_FLAGS, PTRACE } from '../render.js';
import { NR_SYSCALLS } from '../syscalls.js';
import type { Plan } from './context.js';
import { L4 } from './fd.js';
import { IABI } from './ingest-abi.js';
import { NR_CLASS, TYPE_IDS } from './syscall-class.js';

/** Constant strings after the errno names, in RAE_K_* order from RAE_K_F. */
const KONST = ['f', 'file', 'd', 'directory', '4', 'ipv4', '6', 'ipv6', 'u', 'unix', 'ip'];

/** The constant blob and its (offset, length) table: evt.res by errno (0 = SUCCESS), then KONST, ..., evt.dir, evt.source and the host name. */
export function constants(hostname: string): { blob: Uint8Array; table: Int32Array } {
  const strs: string[] = Array.from({ length: IABI.K_ERRNO_END }, (_, e) => (e === 0 ? 'SUCCESS' : (ERRNO[e] ?? '')));
  strs.push(...KONST);
  for (let d = 0; d < 64; d++) strs.push(DOMAINS[d] ?? '');
  for (let r = 0; r < 32; r++) strs.push(PTRACE[r] ?? '');
  for (let r = 0x4200; r < 0x4210; r++) strs.push(PTRACE[r] ?? '');
  strs.push('O_RDONLY', 'O_WRONLY', 'O_RDWR', ...OPEN_FLAGS.map(([, n]) => n));
  strs.push(...L4);
  strs.push(...MODE_FLAGS.map(([, n]) => n));
  strs.push('<', 'syscall', hostname);
  if (strs[IABI.K_HOSTNAME] !== hostname || strs.length !== IABI.K_COUNT || OPEN_FLAGS.length !== IABI.OFLAG_COUNT) throw new Error('ingest: constant table out of step with ingest.h');
  const table = new Int32Array(2 * IABI.K_COUNT);
  const parts: Buffer[] = [];
  let at = 0;
  strs.forEach((str, i) => {
    const b = Buffer.from(str);
    table[2 * i] = at;
    table[2 * i + 1] = b.length;
    parts.push(b);
    at += b.length;
  });
  return { blob: new Uint8Array(Buffer.concat(parts)), table };
}

let nativeCache: NativeIngest | null | undefined;

/** The addon's translator when it loads and speaks this file's numbers, else undefined. */
export function nativeTranslator(): NativeIngest | undefined {
  if (nativeCache === undefined) {
    const loaded = loadNative();
    const n = 'native' in loaded && typeof loaded.native.ingest === 'function' ? loaded.native : undefined;
    nativeCache = n && Object.entries(IABI).every(([k, v]) => n.ingestAbi[k] === v) ? n : null;
  }
  return nativeCache ?? undefined;
}

/**
 * The native plan (ingest.h RAE_IP_*): after the slot triples, each keyed slot's argument as a
 * byte count and its bytes packed four to a word; the slot's field word holds the count's word
 * index above RAE_SLOT_ARG_SHIFT.
 */
export function nativePlan(stride: number, head: number, slots: Plan['slots'], consts: Int32Array): Int32Array {
  const keyWords = slots.reduce((n, s) => n + (s.key ? 1 + Math.ceil(s.key.length / 4) : 0), 0);
  const w = new Int32Array(IABI.IP_SLOTS + 3 * slots.length + keyWords);
  w[IABI.IP_STRIDE] = stride;
  w[IABI.IP_HEAD] = head;
  w[IABI.IP_NSLOTS] = slots.length;
  for (let nr = 0; nr < NR_SYSCALLS; nr++) {
    w[IABI.IP_NR + 2 * nr] = TYPE_IDS[nr]!;
    w[IABI.IP_NR + 2 * nr + 1] = NR_CLASS[nr]!;
  }
  w.set(consts, IABI.IP_CONST);
  w.set(
    OPEN_FLAGS.map(([bit]) => bit),
    IABI.IP_OFLAGS,
  );
  let at = IABI.IP_SLOTS + 3 * slots.length;
  slots.forEach(({ slot, field, key }, j) => {
    let word = field;
    if (key) {
      word |= at << IABI.SLOT_ARG_SHIFT;
      w[at] = key.length;
      const packed = new Uint8Array(4 * Math.ceil(key.length / 4));
      packed.set(key);
      w.set(new Int32Array(packed.buffer), at + 1);
      at += 1 + packed.length / 4;
    }
    w.set([word, slot.offset, slot.index], IABI.IP_SLOTS + 3 * j);
  });
  return w;
}
