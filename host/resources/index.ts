// Resources facade: manifests from a watched directory reconciled into the module state and the
// ruleset (controller), the module's sources, and `startModule` as `rae run` uses it.
export { ResourceController, type ModuleState, type ApplyResult, type RulesEngine } from './controller.js';
export { ModuleSources, type ModuleSource, type ModuleSourcesOptions, type RunningSource, type SourceState } from './sources.js';
export { readManifests, MODULE_NAME, KINDS } from './manifests.js';
export { RESOURCE_REJECTED_RULE } from './report.js';
export { defaultModuleConfig, ensureResourcesDir, resourcesDir, startModule, startResources, type ModuleReload, type Resources, type ResourcesOptions, type RunningModule } from './module.js';
export { publishAuditWebhookConfig } from './control-plane.js';
