// The problem type every configuration resolver returns (host/config/config.ts composes the
// sections; each subsystem checks its own): a value, never thrown, naming the dotted key.

/** A config problem: the dotted key path and what is wrong with it. */
export interface ConfigProblem {
  key: string;
  message: string;
}
