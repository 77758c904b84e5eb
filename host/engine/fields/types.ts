// Field registry types: the shape of one field-table entry (libsinsp `filtercheck_field_info` and
// the plugin SDK's `FieldEntry`, reference/falco-language.md A.8 and E), the value types, and the
// small builder the per-provider tables use. Consumed by the tables in this folder; produces the
// `FieldDef` objects the parser, checker, codegen and output formatter read.

/** The event sources this engine knows. */
export type Source = 'syscall' | 'k8s_audit';

/** Every source, in a fixed order. */
export const SOURCES: readonly Source[] = ['syscall', 'k8s_audit'];

/**
 * libsinsp parameter types (driver/ppm_events_public.h `ppm_param_type`), as far as fields and
 * event parameters use them. `PT_DYN` marks `evt.rawarg`, whose real type comes from the argument.
 */
export type PtType =
  | 'PT_CHARBUF'
  | 'PT_BYTEBUF'
  | 'PT_FSPATH'
  | 'PT_FSRELPATH'
  | 'PT_BOOL'
  | 'PT_INT8'
  | 'PT_INT16'
  | 'PT_INT32'
  | 'PT_INT64'
  | 'PT_UINT8'
  | 'PT_UINT16'
  | 'PT_UINT32'
  | 'PT_UINT64'
  | 'PT_PORT'
  | 'PT_IPADDR'
  | 'PT_IPNET'
  | 'PT_RELTIME'
  | 'PT_ABSTIME'
  | 'PT_DOUBLE'
  | 'PT_ERRNO'
  | 'PT_PID'
  | 'PT_FD'
  | 'PT_MODE'
  | 'PT_FLAGS8'
  | 'PT_FLAGS16'
  | 'PT_FLAGS32'
  | 'PT_ENUMFLAGS8'
  | 'PT_ENUMFLAGS16'
  | 'PT_ENUMFLAGS32'
  | 'PT_UID'
  | 'PT_GID'
  | 'PT_SIGTYPE'
  | 'PT_SYSCALLID'
  | 'PT_SOCKADDR'
  | 'PT_SOCKTUPLE'
  | 'PT_FDLIST'
  | 'PT_DYN';

/** How values of a type compare (A.5). */
export type TypeClass = 'string' | 'bytes' | 'bool' | 'signed' | 'unsigned' | 'double' | 'ipaddr' | 'ipnet';

/** Who provides a field, as Falco's field listing names it. */
export type Provider = 'libsinsp' | 'container plugin' | 'k8saudit plugin' | 'json plugin';

/** One field-table entry. */
export interface FieldDef {
  /** Table name: 'proc.aname', 'evt.arg', 'ka.uri.param', 'jevt.value'. */
  name: string;
  source: Source;
  type: PtType;
  /** EPF_IS_LIST: the field yields a list of values (only `in`, `intersects`, `exists` apply). */
  isList: boolean;
  /** EPF_ARG_ALLOWED / EPF_ARG_REQUIRED. */
  arg: 'none' | 'allowed' | 'required';
  /** EPF_ARG_INDEX (non-negative integer) / EPF_ARG_KEY (any text) / either. */
  argKind: 'index' | 'key' | 'any';
  /** The arg may also be written as a name suffix: `evt.arg.flags` = `evt.arg[flags]`. */
  dottedArg: boolean;
  /** EPF_NO_RHS: cannot be compared with another field. */
  noRhs: boolean;
  /** EPF_NO_TRANSFORMER: cannot be wrapped in tolower() and friends. */
  noTransformer: boolean;
  /** EPF_FILTER_ONLY: usable in conditions, not printable in outputs. */
  filterOnly: boolean;
  /** EPF_FORMAT_SUGGESTED: appended to every rule output by Falco's default `append_output`. */
  suggested: boolean;
  provider: Provider;
  desc: string;
}

const SIGNED = new Set<PtType>(['PT_INT8', 'PT_INT16', 'PT_INT32', 'PT_INT64', 'PT_ERRNO', 'PT_PID', 'PT_FD']);
const UNSIGNED = new Set<PtType>([
  'PT_UINT8',
  'PT_UINT16',
  'PT_UINT32',
  'PT_UINT64',
  'PT_PORT',
  'PT_RELTIME',
  'PT_ABSTIME',
  'PT_MODE',
  'PT_FLAGS8',
  'PT_FLAGS16',
  'PT_FLAGS32',
  'PT_ENUMFLAGS8',
  'PT_ENUMFLAGS16',
  'PT_ENUMFLAGS32',
  'PT_UID',
  'PT_GID',
  'PT_SIGTYPE',
  'PT_SYSCALLID',
]);

/**
 * The comparison class of a type (filter_compare.cpp flt_is_comparable groups). Socket addresses,
 * tuples, fd lists and `PT_DYN` (only reachable through `evt.rawarg.addr` and the like) are raw
 * buffers here; libsinsp refuses to compare them at all.
 */
export function typeClass(t: PtType): TypeClass {
  if (t === 'PT_CHARBUF' || t === 'PT_FSPATH' || t === 'PT_FSRELPATH') return 'string';
  if (t === 'PT_BYTEBUF') return 'bytes';
  if (t === 'PT_BOOL') return 'bool';
  if (t === 'PT_DOUBLE') return 'double';
  if (t === 'PT_IPADDR') return 'ipaddr';
  if (t === 'PT_IPNET') return 'ipnet';
  if (SIGNED.has(t)) return 'signed';
  if (UNSIGNED.has(t)) return 'unsigned';
  return 'bytes';
}

/** Optional parts of a table entry; everything absent is false / 'none'. */
export type FieldOpts = Partial<Pick<FieldDef, 'isList' | 'arg' | 'argKind' | 'dottedArg' | 'noRhs' | 'noTransformer' | 'filterOnly' | 'suggested'>>;

/** Returns a table-entry constructor bound to one source and provider. */
export function fieldMaker(source: Source, provider: Provider) {
  return (name: string, type: PtType, desc: string, opts: FieldOpts = {}): FieldDef => ({
    name,
    source,
    type,
    isList: opts.isList ?? false,
    arg: opts.arg ?? 'none',
    argKind: opts.argKind ?? 'key',
    dottedArg: opts.dottedArg ?? false,
    noRhs: opts.noRhs ?? false,
    noTransformer: opts.noTransformer ?? false,
    filterOnly: opts.filterOnly ?? false,
    suggested: opts.suggested ?? false,
    provider,
    desc,
  });
}

/** Ancestor fields (`proc.aname[N]`): optional index, no RHS field, no transformer. */
export const ANCESTOR: FieldOpts = { arg: 'allowed', argKind: 'index', noRhs: true, noTransformer: true };
/** Fields matching either endpoint (`fd.ip`, `fd.net`, `fd.port`): filters only. */
export const EITHER_ENDPOINT: FieldOpts = { filterOnly: true, noRhs: true, noTransformer: true };
/** Required key argument that may also be written as a dotted suffix (`k8s.pod.label.app`). */
export const DOTTED_KEY: FieldOpts = { arg: 'required', argKind: 'key', dottedArg: true };
/** Plugin list fields with an optional container/volume/rule index (`...image[0]`). */
export const INDEXED_LIST: FieldOpts = { isList: true, arg: 'allowed', argKind: 'index' };
