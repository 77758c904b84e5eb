// The module's state machine over the resources of the watched directory. Each snapshot is
// reconciled into: the module state (disabled until a valid ModuleConfig `runtime-audit-engine`
// says `enabled: true`; its settings pick the built-in rule sets and debug logging) and the
// ruleset = the selected built-in sets (+ configured files) + every valid EngineAuditRules, in
// resource-name order, then every valid NamespacedEngineAuditRules (scoped to its namespace,
// rules-file.ts; one whose rule would replace another is refused, namespaced.ts), each
// translated to a rules file in memory. The ruleset only changes
// through `engine.load`, which installs a valid set and refuses an invalid one. The first
// ruleset is compiled before it goes live; every later one goes live at once on the engine's
// interpreter tier and moves to WASM when compiled (DetectionEngine, interpreterFirst).
//   - an invalid resource is rejected (diagnostics, internal alert, metric); its previous
//     accepted version, if any, stays in force, and so do the running rules;
//   - a resource that is gone from the directory is gone from the ruleset;
//   - a document that cannot even be identified (YAML error) keeps every resource its file
//     held before, since nothing says they were deleted.
// Consumes ManifestFile snapshots; produces engine loads, ModuleState changes and reports.
import { createHash } from 'node:crypto';
import { type Diagnostic, diagnostic, type LoadResult, type Location, type RulesFile, type SourceLookup, type SourceText } from '../engine/index.js';
import { readManifests, type ModuleConfigResource, type Resource, type RulesResource } from './manifests.js';
import { namespacedConflicts } from './namespaced.js';
import { reportRejection, type Rejection, type Reporter } from './report.js';
import { owners, remapDiagnostics, toRulesFile, type TranslatedRules } from './rules-file.js';
import type { ManifestFile } from './watch.js';

/** What the module is told to be. */
export interface ModuleState {
  enabled: boolean;
  debugLogging: boolean;
  /** The built-in rule sets in the running ruleset. */
  builtIn: string[];
}

/** The engine as the controller uses it (DetectionEngine fits). */
export interface RulesEngine {
  /**
   * Installs the files' ruleset if valid (and compilable: `errors` says why not); with
   * `interpreterFirst`, live at once and compiled in the background (`compiled` settles then).
   */
  load(
    files: readonly RulesFile[],
    opts?: { interpreterFirst?: boolean },
  ): Promise<{ swapped: boolean; result: LoadResult; errors?: ReadonlyArray<{ code: string; message: string }>; from?: string; compiled?: Promise<{ state: string; changeToCompiledMs?: number }> }>;
}

export interface ControllerOptions {
  /** apiVersion group of the resources (`<group>/v1alpha1`). */
  apiGroup: string;
  engine: RulesEngine;
  /** The rules files for a selection of built-in sets (plus any configured files); unknown sets are an error. */
  baseFiles(builtIn: readonly string[]): RulesFile[];
  /** The selection when no ModuleConfig gives builtInRulesList. */
  defaultBuiltIn: readonly string[];
  /** Called after every change of the module state (and once after the first snapshot). */
  onModuleState(state: ModuleState): Promise<void> | void;
  /** Called after every installed ruleset. */
  onRulesLoaded?(result: LoadResult, summary: string): void;
  reporter: Reporter;
}

/** The outcome of one snapshot. */
export interface ApplyResult {
  /** True when a new ruleset was installed. */
  swapped: boolean;
  /** Every rejection reported for this snapshot (including ones already reported before). */
  rejections: Rejection[];
  state: ModuleState;
}

const key = (kind: string, name: string) => `${kind}/${name}`;

function fingerprint(files: readonly RulesFile[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.name}\0${f.text}\0`);
  return h.digest('hex');
}

function where(ctx: Location[]): string {
  const p = ctx[0]!.position;
  return `${p.name}:${p.line}:${p.column}`;
}

/** Reconciles snapshots, one at a time. */
export class ResourceController {
  private module: ModuleConfigResource | undefined;
  /** The rules resources in force, by name (a namespaced one's is `<namespace>/<name>`). */
  private rules = new Map<string, RulesResource>();
  private running: { fingerprint: string; builtIn: string[] } | undefined;
  private state: ModuleState | undefined;
  private reported = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();
  private last: readonly ManifestFile[] = [];

  constructor(private readonly opts: ControllerOptions) {}

  /** The current module state (undefined before the first snapshot). */
  get moduleState(): ModuleState | undefined {
    return this.state;
  }

  /** True once a ruleset has been installed. */
  get loaded(): boolean {
    return this.running !== undefined;
  }

  /** Names of the EngineAuditRules (and NamespacedEngineAuditRules, `<namespace>/<name>`) in the running ruleset. */
  get activeRules(): string[] {
    return [...this.rules.keys()].sort();
  }

  /** Reconciles one snapshot of the directory. */
  apply(files: readonly ManifestFile[]): Promise<ApplyResult> {
    this.last = files;
    const next = this.queue.then(() => this.reconcile(files));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Reconciles the last snapshot again, with `baseFiles` and `defaultBuiltIn` as they are now (SIGHUP's reload). */
  reapply(): Promise<ApplyResult> {
    return this.apply(this.last);
  }

  private async reconcile(files: readonly ManifestFile[]): Promise<ApplyResult> {
    const texts = new Map<string, SourceText>();
    const lookups: SourceLookup[] = [(n) => texts.get(n)];
    const lookup: SourceLookup = (n) => lookups.reduce<SourceText | undefined>((found, l) => found ?? l(n), undefined);
    const rejections: Rejection[] = [];
    const protectedFiles = new Set<string>();
    const rejectedKeys = new Set<string>();
    const valid: Resource[] = [];
    const seen = new Map<string, Resource>();

    for (const f of files) {
      if (f.text === undefined) {
        protectedFiles.add(f.path);
        const at: Location = { itemType: 'rules content', itemName: '', position: { name: f.path, line: 1, column: 1, offset: 0 } };
        rejections.push({ kind: '', name: '', where: `${f.path}:1:1`, errors: [diagnostic('LOAD_ERR_FILE_READ', f.error ?? 'cannot read', [at])] });
        continue;
      }
      const read = readManifests(f.path, f.text, this.opts.apiGroup);
      texts.set(f.path, read.src);
      for (const r of read.rejected) {
        if (!r.kind || !r.name) protectedFiles.add(f.path);
        else rejectedKeys.add(key(r.kind, r.name));
        rejections.push({ kind: r.kind, name: r.name, where: where(r.ctx), errors: r.errors });
      }
      for (const res of read.resources) {
        const k = key(res.kind, res.name);
        const first = seen.get(k);
        if (first) {
          const msg = `${k} is already defined at ${where(first.ctx)}; this definition is ignored`;
          rejections.push({ kind: res.kind, name: res.name, where: where(res.ctx), errors: [diagnostic('LOAD_ERR_VALIDATE', msg, res.ctx)] });
          continue;
        }
        seen.set(k, res);
        valid.push(res);
      }
    }

    // Candidates: valid resources, else what was accepted before when the resource is still there but broken.
    const keeps = (prev: Resource) => rejectedKeys.has(key(prev.kind, prev.name)) || protectedFiles.has(prev.file);
    let module = valid.find((r): r is ModuleConfigResource => r.kind === 'ModuleConfig');
    if (!module && this.module && keeps(this.module)) module = this.module;
    const candidates = new Map<string, RulesResource>();
    for (const r of valid) if (r.kind !== 'ModuleConfig') candidates.set(r.name, r);
    for (const [name, prev] of this.rules) if (!candidates.has(name) && keeps(prev)) candidates.set(name, prev);

    const builtIn = [...(module?.builtInRulesList ?? this.opts.defaultBuiltIn)];
    const swapped = await this.install(builtIn, candidates, rejections, lookups);
    this.module = module;
    const state: ModuleState = { enabled: module?.enabled ?? false, debugLogging: module?.debugLogging ?? false, builtIn: this.running?.builtIn ?? builtIn };
    this.report(rejections, lookup);
    // Without any ruleset there is nothing to run the sources for: the state waits for one.
    if (this.loaded && JSON.stringify(state) !== JSON.stringify(this.state)) {
      this.state = state;
      await this.opts.onModuleState(state);
    }
    return { swapped, rejections, state };
  }

  /** Loads base + candidates; on errors in manifests, drops (or reverts) the guilty ones and tries once more. */
  private async install(builtIn: string[], candidates: Map<string, RulesResource>, rejections: Rejection[], lookups: SourceLookup[]): Promise<boolean> {
    // The cluster's rules first: a namespaced exception appends to a rule defined before it.
    const order = (r: RulesResource) => `${r.kind === 'NamespacedEngineAuditRules' ? 1 : 0}${r.name}`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const base = this.opts.baseFiles(builtIn);
      const sorted = () => [...candidates.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
      // Twice: a version in force put back in place of a refused one is checked too.
      for (let pass = 0; pass < 2; pass++) {
        for (const [r, ds] of namespacedConflicts(base, sorted())) {
          rejections.push({ kind: r.kind, name: r.name, where: where(r.ctx), errors: ds });
          this.revert(candidates, r);
        }
      }
      const translations = sorted().map(toRulesFile);
      const files = [...base, ...translations.map((t) => t.file)];
      const fp = fingerprint(files);
      if (this.running?.fingerprint === fp) {
        this.rules = candidates;
        return false;
      }
      const started = performance.now();
      const { swapped, result, errors: runtime, compiled, from } = await this.opts.engine.load(files, { interpreterFirst: this.running !== undefined });
      if (swapped) {
        this.rules = candidates;
        this.running = { fingerprint: fp, builtIn };
        const s = result.ruleset.stats;
        const names = translations.map((t) => t.resource.name).join(', ') || 'none';
        const summary = `resources: ruleset loaded in ${Math.round(performance.now() - started)} ms: ${s.rules} rules (${s.enabled} enabled); built-in sets: ${builtIn.join(', ') || 'none'}; EngineAuditRules: ${names}`;
        const source = from === 'disk' ? ' (compiled module from the module cache)' : from === 'shipped' ? ' (compiled module shipped with the build)' : '';
        this.opts.reporter.log(compiled ? `${summary} (reference interpreter until compiled)` : summary + source);
        this.opts.onRulesLoaded?.(result, summary);
        // A compile failure is reported by the engine (the interpreter keeps serving this ruleset).
        void compiled?.then((u) => {
          if (u.state === 'wasm') this.opts.reporter.log(`resources: ruleset compiled, on WASM ${Math.round(u.changeToCompiledMs ?? 0)} ms after the load started`);
        });
        return true;
      }
      const errors = result.diagnostics.filter((d) => d.severity === 'error');
      const guilty = new Map<TranslatedRules, Diagnostic[]>();
      const outside: Diagnostic[] = [];
      for (const d of errors) {
        const own = owners(d, translations);
        if (own.length === 0) outside.push(d);
        for (const t of own) guilty.set(t, [...(guilty.get(t) ?? []), d]);
      }
      const reason = errors.length === 0 && runtime && runtime.length > 0 ? 'compile' : 'invalid';
      if (reason === 'compile') {
        // Valid but not compilable: what changed since the running set is to blame.
        const why = runtime!.map((e) => `${e.code}: ${e.message}`).join('; ');
        for (const t of translations) {
          if (this.rules.get(t.resource.name) !== t.resource) guilty.set(t, [diagnostic('LOAD_ERR_COMPILE_CONDITION', `the ruleset with this resource does not compile: ${why}`, t.resource.ctx)]);
        }
        if (guilty.size === 0) outside.push(diagnostic('LOAD_ERR_COMPILE_CONDITION', `the ruleset does not compile: ${why}`, []));
      }
      for (const [t, ds] of guilty) {
        const r = t.resource;
        rejections.push({ kind: r.kind, name: r.name, where: where(r.ctx), errors: remapDiagnostics(ds, translations), reason });
        this.revert(candidates, r);
      }
      if (guilty.size === 0 || outside.length > 0) {
        // Errors outside every manifest (the built-in or configured files): nothing to drop.
        lookups.push(result.sources);
        const errs = outside.length > 0 ? outside : errors;
        const at = errs[0]?.locations[0]?.position;
        rejections.push({ kind: 'ruleset', name: '', where: at ? `${at.name}:${at.line}:${at.column}` : '(ruleset)', errors: errs, reason });
        return false;
      }
    }
    return false;
  }

  /** Drops a rejected candidate: its version in force stays, if any. */
  private revert(candidates: Map<string, RulesResource>, r: RulesResource): void {
    const prev = this.rules.get(r.name);
    if (prev && prev !== r) candidates.set(r.name, prev);
    else candidates.delete(r.name);
  }

  /** Reports rejections not reported for the previous snapshot (an unchanged bad file is reported once). */
  private report(rejections: Rejection[], lookup: SourceLookup): void {
    const now = new Set<string>();
    for (const r of rejections) {
      const id = `${r.kind}/${r.name}@${r.where}:${r.errors.map((d) => d.message).join('\n')}`;
      now.add(id);
      if (!this.reported.has(id)) reportRejection(this.opts.reporter, r, lookup, this.loaded);
    }
    this.reported = now;
  }
}
