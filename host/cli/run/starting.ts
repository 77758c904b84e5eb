// What a start of `rae run` needs beyond its configuration and rules: the metrics, the fault
// tracking, the servers, the engine, the sources and the reload. run.ts imports this module only
// when it starts, so that --version, --list, --list-events, -L, -l and --dry-run do not load them
// (measured on a loaded 2-core VM: `rae run --version` 2.7 s of CPU with them, against 1.0 s for
// `rae validate --list`, which loads the rules language alone).
export { createMetrics } from '../../metrics/index.js';
export { createFaultTracking } from '../../tracking/index.js';
export { createDatabaseLink } from '../../output/destinations/store-link.js';
export { Lifecycle } from './lifecycle.js';
export { handleSignals } from './signals.js';
export { apiStarts } from './start-api.js';
export { consoleRules } from './start-console.js';
export { startEngine } from './start-engine.js';
export { startOutputs } from './start-outputs.js';
export { startReload } from './start-reload.js';
export { startSources } from './start-sources.js';
