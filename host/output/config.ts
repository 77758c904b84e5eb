// The output keys of the `forwarder` configuration section (docs/forwarder.md): the stdout
// destination, the destinations of `outputs.<name>.<setting>` (destinations/table.ts, checked
// by its resolveOutputs, falcosidekick's environment names accepted) with their shared
// defaults, the global custom and templated fields, and Falco's JSON switches. host/config/
// composes these keys with the forwarder server's (host/forwarder/config.ts) under `forwarder`.
import { FALCO_JSON_DEFAULTS, type FalcoJsonConfig } from './falco-json.js';

/** What the fan-out (fanout.ts) reads from the configuration. */
export interface OutputConfig {
  /** Each alert's JSON line logged to stderr (falcosidekick's debug). */
  debugLogging: boolean;
  /** The stdout destination: one JSON line per alert. */
  stdout: boolean;
  /** The webhook destination's address (the same setting as outputs.webhook.address). */
  webhookUrl: string;
  /** Defaults of every destination's timeoutms, retries and queuesize. */
  webhookTimeoutMs: number;
  webhookRetries: number;
  queueSize: number;
  /** Fields added to every alert on every destination (falcosidekick's customfields/templatedfields). */
  customfields: Record<string, string>;
  templatedfields: Record<string, string>;
  /** `<name>: {<setting>: value}` per destination (destinations/table.ts). */
  outputs: Record<string, unknown>;
  /** Falco's JSON switches for the alert line (falco-json.ts), Falco's key names. */
  falco: FalcoJsonConfig;
}

/** The defaults: stdout only. */
export function defaultOutputConfig(): OutputConfig {
  return {
    debugLogging: false,
    stdout: true,
    webhookUrl: '',
    webhookTimeoutMs: 5000,
    webhookRetries: 3,
    queueSize: 10000,
    customfields: {},
    templatedfields: {},
    outputs: {},
    falco: { ...FALCO_JSON_DEFAULTS, append_output: [] },
  };
}
