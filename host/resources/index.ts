// Resources facade: manifests from a watched directory reconciled into the module state and the
// ruleset (controller), the module's sources, and `startModule` as `rae run` uses it.
export type { ModuleState } from './controller.js';
export { ModuleSources, type ModuleSource, type SourceState } from './sources.js';
export { RESOURCE_REJECTED_RULE } from './report.js';
export { startModule, startResources, type RunningModule } from './module.js';
export { publishAuditWebhookConfig } from './control-plane.js';
