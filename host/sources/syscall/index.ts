// Facade of the syscall source's kernel side: the addon loader and support check, the wire-format
// mirror, the syscall name table, the record decoder and the /proc bootstrap.
export { probeSupport, openCapture, clocks, loadNative, ADDON_PATH } from './addon.js';
export type { Support, SupportCode, Capture, CaptureOptions, CaptureStats, CaptureError, NativeLayout } from './addon.js';
export * as abi from '../../abi/records.js';
export { syscallName, syscallNr, syscallIds, DATA_ONLY, DECODED, NR_SYSCALLS } from './syscalls.js';
export { forEachRecord, decodeBatch, decodeRecord } from './decode.js';
export type { EventRecord, SyscallRecord, ProcRecord, ExitRecord, SockAddr, DecodeError } from './decode.js';
export { readProcess, readProcesses, encodeProcRecord } from './procfs.js';
export type { ProcSnapshot } from './procfs.js';
export { capsText, parseCapHex, CAP_NAMES } from './caps.js';
