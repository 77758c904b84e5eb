// Facade of the syscall source's kernel side: the addon loader and support check, the wire-format
// mirror, the syscall name table and the /proc bootstrap.
export { probeSupport, openCapture, loadNative, ADDON_PATH } from './addon.js';
export type { Capture, CaptureOptions } from './addon.js';
export * as abi from '../../abi/records.js';
export { syscallName, syscallNr, syscallIds, DATA_ONLY, DECODED, NR_SYSCALLS } from './syscalls.js';
export { readProcess, readProcesses, encodeProcRecord } from './procfs.js';
