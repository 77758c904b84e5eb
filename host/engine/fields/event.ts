// libsinsp event fields: the generic ones every source has (sinsp_filtercheck_gen_event.cpp:
// evt.num, evt.time, evt.source, evt.hostname...) and the syscall-only ones
// (sinsp_filtercheck_event.cpp: evt.type, evt.arg, evt.res...). Types and flags are upstream's.
import { fieldMaker, type FieldDef, type Source } from './types.js';

/** Fields libsinsp gives every event source, syscall and plugin alike. */
export function genericEventFields(source: Source): FieldDef[] {
  const f = fieldMaker(source, 'libsinsp');
  return [
    f('evt.num', 'PT_UINT64', 'Event number (starts at 1).'),
    f('evt.time', 'PT_CHARBUF', 'Event timestamp as a time string with nanoseconds (HH:MM:SS.nnnnnnnnn).'),
    f('evt.time.s', 'PT_CHARBUF', 'Event timestamp as a time string without nanoseconds.'),
    f('evt.time.iso8601', 'PT_CHARBUF', 'Event timestamp in ISO 8601 format with nanoseconds and UTC offset.'),
    f('evt.datetime', 'PT_CHARBUF', 'Event timestamp as a date and time string.'),
    f('evt.datetime.s', 'PT_CHARBUF', 'Event timestamp as a date and time string without nanoseconds.'),
    f('evt.rawtime', 'PT_ABSTIME', 'Absolute event timestamp in nanoseconds from epoch.'),
    f('evt.rawtime.s', 'PT_ABSTIME', 'Integer part of the event timestamp (seconds since epoch).'),
    f('evt.rawtime.ns', 'PT_ABSTIME', 'Fractional part of the event timestamp (nanoseconds).'),
    f('evt.reltime', 'PT_RELTIME', 'Nanoseconds since the beginning of the capture.'),
    f('evt.reltime.s', 'PT_RELTIME', 'Seconds since the beginning of the capture.'),
    f('evt.reltime.ns', 'PT_RELTIME', 'Fractional part (ns) of the time since the beginning of the capture.'),
    f('evt.pluginname', 'PT_CHARBUF', 'For plugin events, the name of the plugin that generated it.'),
    f('evt.plugininfo', 'PT_CHARBUF', 'For plugin events, a summary of the event formatted by the plugin.'),
    f('evt.source', 'PT_CHARBUF', 'The name of the source that produced the event.'),
    f('evt.is_async', 'PT_BOOL', "'true' for asynchronous events."),
    f('evt.asynctype', 'PT_CHARBUF', "For asynchronous events, the event type (e.g. 'container')."),
    f('evt.hostname', 'PT_CHARBUF', 'The hostname of the underlying host (overridable through the environment).'),
  ];
}

const f = fieldMaker('syscall', 'libsinsp');

/** Syscall-only event fields. */
export const SYSCALL_EVENT_FIELDS: readonly FieldDef[] = [
  f('evt.latency', 'PT_RELTIME', 'Delta between an exit event and its enter event, in nanoseconds (deprecated).'),
  f('evt.latency.s', 'PT_RELTIME', 'Integer part of the event latency (deprecated).'),
  f('evt.latency.ns', 'PT_RELTIME', 'Fractional part of the event latency (deprecated).'),
  f('evt.latency.human', 'PT_CHARBUF', 'Event latency as a human-readable string (deprecated).'),
  f('evt.deltatime', 'PT_RELTIME', 'Delta between this event and the previous one, in nanoseconds.'),
  f('evt.deltatime.s', 'PT_RELTIME', 'Integer part of the delta from the previous event.'),
  f('evt.deltatime.ns', 'PT_RELTIME', 'Fractional part of the delta from the previous event.'),
  f('evt.dir', 'PT_CHARBUF', "Event direction: '>' enter, '<' exit (deprecated: only exit events exist)."),
  f('evt.type', 'PT_CHARBUF', "The name of the event (e.g. 'open')."),
  f('evt.type.is', 'PT_UINT32', 'Returns 1 for events of the given type (evt.type.is.open), 0 otherwise.', { arg: 'required', argKind: 'key', dottedArg: true }),
  f('syscall.type', 'PT_CHARBUF', 'For system call events, the name of the system call; unset for other events.'),
  f('evt.category', 'PT_CHARBUF', "The event category ('file', 'net', 'memory'...)."),
  f('evt.cpu', 'PT_INT16', 'Number of the CPU where the event happened.'),
  f('evt.args', 'PT_CHARBUF', 'All the event arguments in one string.'),
  f('evt.arg', 'PT_CHARBUF', 'One event argument by name (evt.arg.fd, evt.arg[fd]) or index (evt.arg[0]), as text.', { arg: 'required', argKind: 'any', dottedArg: true }),
  f('evt.rawarg', 'PT_DYN', 'One event argument by name (evt.rawarg.res), with its raw type.', { arg: 'required', argKind: 'key', dottedArg: true, noRhs: true, noTransformer: true }),
  f('evt.info', 'PT_CHARBUF', 'Usually evt.args; higher-level information for some events.'),
  f('evt.buffer', 'PT_BYTEBUF', 'The binary data buffer of I/O events (read, recvfrom...).'),
  f('evt.buflen', 'PT_UINT64', 'The length of the binary data buffer.'),
  f('evt.res', 'PT_CHARBUF', "The return value as text: 'SUCCESS' or an errno name ('ENOENT')."),
  f('evt.rawres', 'PT_INT64', 'The return value as a number (e.g. -2).'),
  f('evt.failed', 'PT_BOOL', "'true' for events that returned an error."),
  f('evt.is_io', 'PT_BOOL', "'true' for events that read or write FDs."),
  f('evt.is_io_read', 'PT_BOOL', "'true' for events that read from FDs."),
  f('evt.is_io_write', 'PT_BOOL', "'true' for events that write to FDs."),
  f('evt.io_dir', 'PT_CHARBUF', "'r' for reads, 'w' for writes."),
  f('evt.is_wait', 'PT_BOOL', "'true' for events that make the thread wait."),
  f('evt.wait_latency', 'PT_RELTIME', 'Time spent waiting, in nanoseconds (deprecated).'),
  f('evt.is_syslog', 'PT_BOOL', "'true' for writes to /dev/log."),
  f('evt.count', 'PT_UINT32', 'Always 1.'),
  f('evt.count.error', 'PT_UINT32', '1 for events that returned an error.'),
  f('evt.count.error.file', 'PT_UINT32', '1 for file I/O events that returned an error.'),
  f('evt.count.error.net', 'PT_UINT32', '1 for network I/O events that returned an error.'),
  f('evt.count.error.memory', 'PT_UINT32', '1 for memory events that returned an error.'),
  f('evt.count.error.other', 'PT_UINT32', '1 for other events that returned an error.'),
  f('evt.count.exit', 'PT_UINT32', '1 for exit events.'),
  f('evt.around', 'PT_UINT64', 'evt.around[T]=D accepts events within D ms of timestamp T.', { arg: 'required', argKind: 'index', filterOnly: true, noRhs: true, noTransformer: true }),
  f('evt.abspath', 'PT_CHARBUF', 'Absolute path computed from dirfd and name (renameat, symlinkat...).'),
  f('evt.abspath.src', 'PT_CHARBUF', 'Absolute source path for syscalls with two paths.'),
  f('evt.abspath.dst', 'PT_CHARBUF', 'Absolute destination path for syscalls with two paths.'),
  f('evt.is_open_read', 'PT_BOOL', "'true' for open events where the path was opened for reading."),
  f('evt.is_open_write', 'PT_BOOL', "'true' for open events where the path was opened for writing."),
  f('evt.is_open_exec', 'PT_BOOL', "'true' for open/creat events creating a file with execute permissions."),
  f('evt.is_open_create', 'PT_BOOL', "'true' for open events where a file is created."),
];

/** Fields Falco warns about as deprecated (enter events are gone since libs 0.23, falco_load_result.cpp). */
export const DEPRECATED_FIELDS: ReadonlySet<string> = new Set(['evt.dir', 'evt.latency', 'evt.latency.s', 'evt.latency.ns', 'evt.latency.human', 'evt.wait_latency']);
