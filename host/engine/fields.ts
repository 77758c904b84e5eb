// The field registry of the `syscall` and `k8s_audit` sources (types, flags, providers) and the
// resolution of field references in conditions and outputs. The tables live in ./fields/.
export * from './fields/index.js';
