// Resources facade for `rae run`: the watched directory, the reconciling controller and the
// module's sources, started together. The first snapshot is reconciled (rules loaded, sources
// started when enabled) before `startResources` resolves, so `ready` means ready.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MODULE_NAME, RESOURCE_VERSION } from './manifests.js';
import { ResourceController, type ControllerOptions, type ModuleState } from './controller.js';
import { watchDirectory, type DirectoryWatch } from './watch.js';

export { ResourceController, type ModuleState, type ApplyResult, type RulesEngine } from './controller.js';
export { ModuleSources, type ModuleSource, type RunningSource } from './sources.js';
export { readManifests, MODULE_NAME, KINDS } from './manifests.js';
export { RESOURCE_REJECTED_RULE } from './report.js';

/** The ModuleConfig written into a resources directory that did not exist (first start). */
export function defaultModuleConfig(apiGroup: string): string {
  return [
    '# Written by `rae run` when it created this directory: the module is on, with default settings.',
    '# Set enabled: false (or delete this file) to stop the event sources; see docs/resources.md.',
    `apiVersion: ${apiGroup}/${RESOURCE_VERSION}`,
    'kind: ModuleConfig',
    'metadata:',
    `  name: ${MODULE_NAME}`,
    'spec:',
    '  enabled: true',
    '  version: 1',
    '',
  ].join('\n');
}

/** Creates the directory if missing; on creation, seeds it with the default ModuleConfig. Returns true when created. */
export function ensureResourcesDir(dir: string, apiGroup: string): boolean {
  if (existsSync(dir)) return false;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'module-config.yaml'), defaultModuleConfig(apiGroup));
  return true;
}

export interface ResourcesOptions extends ControllerOptions {
  dir: string;
  debounceMs?: number;
  rescanMs?: number;
}

/** Running resources. */
export interface Resources {
  controller: ResourceController;
  readonly state: ModuleState | undefined;
  /** Resolves once no directory change is pending or being reconciled. */
  idle(): Promise<void>;
  close(): void;
}

/** Watches `dir` and reconciles every change; resolves after the first snapshot is in force. */
export async function startResources(opts: ResourcesOptions): Promise<Resources> {
  const controller = new ResourceController(opts);
  const watch: DirectoryWatch = await watchDirectory({
    dir: opts.dir,
    debounceMs: opts.debounceMs,
    rescanMs: opts.rescanMs,
    log: opts.reporter.log,
    onChange: async (files) => {
      await controller.apply(files);
    },
  });
  return {
    controller,
    get state() {
      return controller.moduleState;
    },
    idle: () => watch.idle(),
    close: () => watch.close(),
  };
}
