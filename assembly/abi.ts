// AssemblyScript mirror of probes/src/eval_abi.h (included from events.h, the single source of
// truth): memory map, eval record header, thread entry and match record. Checked against the C
// header and host/abi/module.ts by test/runtime/abi-layout.test.ts.

export const ABI_VERSION: i32 = 8;

export const EVAL_PAGES: i32 = 512;
export const EVAL_STATIC_END: usize = 0x100000;
export const EVAL_STATE_BASE: usize = 0x100000;
export const EVAL_STATE_SIZE: usize = 0x800000;
export const EVAL_BATCH_BASE: usize = 0x900000;
export const EVAL_BATCH_SIZE: usize = 0x1400000;
export const EVAL_OUT_BASE: usize = 0x1d00000;
export const EVAL_OUT_SIZE: usize = 0x100000;
export const EVAL_SCRATCH_BASE: usize = 0x1e00000;
export const EVAL_SCRATCH_SIZE: usize = 0x100000;
export const EVAL_MAX_DEPTH: i32 = 16;

export const REC_TYPE: usize = 0;
export const REC_THREAD: usize = 4;
export const REC_PRESENT: usize = 8;

export const THREAD_PID: usize = 4;
export const THREAD_PARENT: usize = 8;
export const THREAD_PRESENT: usize = 12;
export const THREAD_FLAGS: usize = 44;
export const THREAD_SIZE: usize = 208;

export const MATCH_SIZE: usize = 8;
export const MATCH_REFERENCE: u32 = 0xffffffff;
