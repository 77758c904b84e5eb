// Every error code of the compiled evaluator (compile, module checks, evaluation), in one place.
// Errors are values `{ code, message }`; nothing here is thrown across a stage boundary.

/** Stable codes and what they mean. */
const RUNTIME_ERRORS = {
  ECODEGEN: 'a rule uses a construct the compiled evaluator cannot compile',
  ECOMPILE: 'the AssemblyScript compiler rejected the generated module',
  EWASM: 'the bytes are not a valid WebAssembly module',
  EIMPORT: 'the module imports something (a rule module must have no imports)',
  EEXPORT: 'the module does not have exactly the expected exports',
  EMEMORY: 'the module memory is not fixed at the ABI size (minimum = maximum = cap)',
  EABI: 'the module was built for another ABI version or its statics overrun the state region',
  ETRAP: 'the module trapped while evaluating a batch',
  ETIMEOUT: 'the watchdog stopped a batch that ran past its deadline',
  EWORKER: 'the compile worker failed (it exited or ran out of memory); the next compile starts a new one',
  ECOMPILETIMEOUT: 'a compile ran past its deadline; the worker was stopped and the next compile starts a new one',
  ECANCELED: 'a newer ruleset superseded the compile, which was stopped',
} as const;

/** One of the codes above. */
export type RuntimeErrorCode = keyof typeof RUNTIME_ERRORS;

/** An error value. */
export interface RuntimeError {
  code: RuntimeErrorCode;
  message: string;
}

/** Builds an error value. */
export function runtimeError(code: RuntimeErrorCode, message: string): RuntimeError {
  return { code, message };
}
