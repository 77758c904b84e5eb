// evt.args of a kernel SYSCALL record, as libsinsp prints it in an alert: every parameter of the
// syscall's exit event (Falco 0.43 / libs 0.23: exit events carry all parameters), in the event
// table's order (driver/event_table.c), each as `name=value`, followed by `(resolved)` when
// libsinsp resolves one, joined by blanks (sinsp_filtercheck_event.cpp TYPE_ARGS). Values as
// userspace/libsinsp/event.cpp get_param_as_str renders them:
//   PT_ERRNO   the number ("%" PRId64), resolved: the errno name of a negative value
//   PT_FD      the number, resolved: AT_FDCWD for -100, the errno name of another negative
//              value, `<typechar[l4]>name` of an fd in the fd table (render_fd): for socket's new
//              fd its type by domain and l4 protocol, as fd.typechar/fd.l4proto give it (libsinsp's
//              fresh socket has an empty name); a dirfd's directory is not known (no fd table)
//   PT_FSPATH / PT_FSRELPATH  the path as passed, resolved: a relative one against the cwd or
//              dirfd's directory (the record's dir, as evt.arg.* resolves it); none for an absolute one
//   PT_FLAGS32 / PT_ENUMFLAGS32  the number ("%" PRIu32), resolved: the names of the set flags
//              joined by '|' (the enum's name for an ENUMFLAGS value)
//   PT_UINT32 PF_DEC  the number
// Only the syscalls whose rules print evt.args are covered (ARGS_SYSCALLS); for any other the
// field is missing, and fields.ts reports a rule that prints it as reading a missing field.
// Consumes the record and the fields fieldsOf already rendered from it; produces a string.
import { SYSCALL } from '../../abi/records.js';
import { decodeRaw } from '../../engine/index.js';
import { DOMAINS } from './render.js';

/** The renderings a parameter can have; each reads the record or the event's rendered fields. */
type Param =
  | { name: string; kind: 'res' }
  | { name: string; kind: 'retfd' }
  | { name: string; kind: 'dirfd'; arg: number }
  | { name: string; kind: 'path'; second: boolean }
  | { name: string; kind: 'domain' }
  | { name: string; kind: 'u32'; arg: number }
  | { name: string; kind: 'flags'; arg: number; names: ReadonlyArray<readonly [number, string]> };

/** unlinkat_flags: the driver keeps AT_REMOVEDIR (0x200) as PPM_AT_REMOVEDIR, the same value. */
const UNLINKAT_FLAGS = [[0x200, 'AT_REMOVEDIR']] as const;
/** renameat2_flags: RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT (PPM values equal to the kernel's). */
const RENAMEAT2_FLAGS = [
  [1, 'RENAME_NOREPLACE'],
  [2, 'RENAME_EXCHANGE'],
  [4, 'RENAME_WHITEOUT'],
] as const;

const res = { name: 'res', kind: 'res' } as const;
const oldpath = { name: 'oldpath', kind: 'path', second: false } as const;
const newpath = { name: 'newpath', kind: 'path', second: true } as const;

/** The exit event's parameters of each covered syscall (event_table.c, libs 0.23). */
const PARAMS: Readonly<Record<string, readonly Param[]>> = {
  socket: [
    { name: 'fd', kind: 'retfd' },
    { name: 'domain', kind: 'domain' },
    { name: 'type', kind: 'u32', arg: 1 },
    { name: 'proto', kind: 'u32', arg: 2 },
  ],
  rename: [res, oldpath, newpath],
  renameat: [res, { name: 'olddirfd', kind: 'dirfd', arg: 0 }, oldpath, { name: 'newdirfd', kind: 'dirfd', arg: 2 }, newpath],
  renameat2: [res, { name: 'olddirfd', kind: 'dirfd', arg: 0 }, oldpath, { name: 'newdirfd', kind: 'dirfd', arg: 2 }, newpath, { name: 'flags', kind: 'flags', arg: 4, names: RENAMEAT2_FLAGS }],
  rmdir: [res, { name: 'path', kind: 'path', second: false }],
  unlink: [res, { name: 'path', kind: 'path', second: false }],
  unlinkat: [res, { name: 'dirfd', kind: 'dirfd', arg: 0 }, { name: 'name', kind: 'path', second: false }, { name: 'flags', kind: 'flags', arg: 2, names: UNLINKAT_FLAGS }],
};

/** The syscalls whose evt.args the byte path renders. */
export const ARGS_SYSCALLS: ReadonlySet<string> = new Set(Object.keys(PARAMS));

/** fd.l4proto's letter in a rendered IP socket fd (render_fd's ipprotoch). */
const L4_CHAR: Readonly<Record<string, string>> = { tcp: 't', udp: 'u', raw: 'r', icmp: 'i' };

/** A number's text and its resolved text ('' when none), as `value` or `value(resolved)`. */
function shown(value: string, resolved: string): string {
  return resolved === '' ? value : `${value}(${resolved})`;
}

/** A negative fd or errno's resolved text: AT_FDCWD (fds only) or the errno name (`errno(n)`), '' when unknown. */
function negative(v: number, fd: boolean, errno: (n: number) => string | undefined): string {
  if (v >= 0) return '';
  if (fd && v === -100) return 'AT_FDCWD';
  return errno(-v) ?? '';
}

/**
 * evt.args of syscall `name`'s record at vd[off] (view: the same bytes), `fields` the event's
 * fields rendered from it (fd.typechar, fd.l4proto, fd.name, evt.arg.*), `errno(n)` the name of
 * errno n (evt.arg.res's); undefined for a syscall outside ARGS_SYSCALLS.
 */
export function evtArgs(name: string, view: Uint8Array, vd: DataView, off: number, ret: number, fields: Readonly<Record<string, unknown>>, errno: (n: number) => string | undefined): string | undefined {
  const params = PARAMS[name];
  if (params === undefined) return undefined;
  const arg = (i: number) => vd.getBigUint64(off + SYSCALL.args + 8 * i, true);
  const parts = params.map((p) => {
    switch (p.kind) {
      case 'res':
        return `res=${shown(String(ret), negative(ret, false, errno))}`;
      case 'retfd': {
        if (ret < 0) return `${p.name}=${shown(String(ret), negative(ret, true, errno))}`;
        const typechar = fields['fd.typechar'];
        const l4 = L4_CHAR[String(fields['fd.l4proto'])] ?? '';
        return `${p.name}=${shown(String(ret), typechar === undefined ? '' : `<${String(typechar)}${l4}>${String(fields['fd.name'] ?? '')}`)}`;
      }
      case 'dirfd': {
        const fd = Number(BigInt.asIntN(32, arg(p.arg)));
        return `${p.name}=${shown(String(fd), negative(fd, true, errno))}`;
      }
      case 'path': {
        const ref = off + (p.second ? SYSCALL.path2 : SYSCALL.path);
        const at = vd.getUint16(ref, true);
        if (at === 0) return `${p.name}=<NA>`;
        const text = decodeRaw(view.subarray(off + at, off + at + vd.getUint16(ref + 2, true)));
        // the resolved path is evt.arg.<name>'s value (it takes the resolved text when there is one)
        const resolved = text === '' || text.startsWith('/') ? '' : String(fields[`evt.arg.${p.name}`] ?? '');
        return `${p.name}=${shown(text, resolved)}`;
      }
      case 'domain': {
        const d = Number(BigInt.asUintN(32, arg(0)));
        return `domain=${shown(String(d), DOMAINS[d] ?? '')}`;
      }
      case 'u32':
        return `${p.name}=${BigInt.asUintN(32, arg(p.arg))}`;
      case 'flags': {
        // the driver keeps the flags it knows (unlinkat_flags_to_scap, renameat2_flags_to_scap)
        const v = Number(BigInt.asUintN(32, arg(p.arg))) & p.names.reduce((m, [bit]) => m | bit, 0);
        return `${p.name}=${shown(
          String(v),
          p.names
            .filter(([bit]) => (v & bit) === bit)
            .map(([, n]) => n)
            .join('|'),
        )}`;
      }
    }
  });
  return parts.join(' ');
}
