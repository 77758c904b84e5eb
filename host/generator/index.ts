// The event generator (like falcosecurity/event-generator): the action catalogue, selection by a
// regular expression over action names (only the actions of stable rules unless `all`, as
// upstream runs its WithDisabled actions only with --all), and a run that performs each action
// once, in order, in a fresh temporary directory that is removed afterwards (container actions in
// a container of the ContainerHost: a runtime's, or a cgroup box). Actions that cannot work on this machine are
// reported with the reason and counted, never silently dropped.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_ACTIONS } from './audit-actions.js';
import { CONTAINER_ACTIONS, MORE_CONTAINER_ACTIONS } from './container-actions.js';
import type { AuditPoster } from './post.js';
import { ruleOrigin, type RuleMaturity } from './rule-sets.js';
import { SYSCALL_ACTIONS } from './syscall-actions.js';
import { MORE_SYSCALL_ACTIONS } from './syscall-actions-more.js';
import { Unavailable, type Action, type ActionOutcome, type ContainerHost } from './types.js';

export { auditPoster, webhookClient, type AuditPoster } from './post.js';
export { CgroupBoxes, type BoxBind } from './cgroup-box.js';
export { ContainerRunner, GENERATOR_IMAGE, GENERATOR_LABEL, openGeneratorRuntime } from './container.js';
export { alertCountsOf, fetchAlertCounts, firedSince } from './detect.js';
export { parseDurationMs } from './duration.js';
export { renderTable, RunTally, type Detection } from './summary.js';
export { ruleOrigin, type RuleMaturity } from './rule-sets.js';
export type { Action, ActionOutcome, ContainerHost } from './types.js';

/** Every action: syscall actions of the stable rules (those in a container last), of the incubating and sandbox rules (likewise), then audit actions. */
export const ACTIONS: readonly Action[] = [...SYSCALL_ACTIONS, ...CONTAINER_ACTIONS, ...MORE_SYSCALL_ACTIONS, ...MORE_CONTAINER_ACTIONS, ...AUDIT_ACTIONS];

/** Why container actions cannot run when no container was asked for (--containers none). */
export const NO_CONTAINER = 'needs a container: run with --containers auto, runtime (Docker or Podman) or cgroup, not none (see rae event-generator --help)';

/** The maturity of the action's rule ('sandbox' for a rule no built-in set defines: never run by default). */
export function maturityOf(a: Action): RuleMaturity {
  return ruleOrigin(a.rule)?.maturity ?? 'sandbox';
}

/** The actions whose name matches `pattern` (all when absent): those of stable rules only, unless `all`. */
export function selectActions(pattern?: RegExp, opts: { all?: boolean } = {}): Action[] {
  return ACTIONS.filter((a) => (!pattern || pattern.test(a.name)) && (opts.all || maturityOf(a) === 'stable'));
}

/** Why a container action cannot run in a cgroup box, from its `runtimeOnly`. */
export function runtimeOnly(why: string): string {
  return `needs a runtime's container, not a cgroup box: ${why}`;
}

/** Why an action cannot work here, considering how audit events would be sent and whether containers can be made. */
function whyUnavailable(a: Action, audit: { poster?: AuditPoster; unavailable?: string }, containers: { runner?: ContainerHost; unavailable?: string } = {}): string | undefined {
  if (a.source === 'k8s_audit' && !audit.poster) return audit.unavailable ?? 'no webhook to send audit events to';
  if (a.container && !containers.runner) return containers.unavailable ?? NO_CONTAINER;
  if (a.container?.runtimeOnly && containers.runner?.runtime === 'cgroup') return runtimeOnly(a.container.runtimeOnly);
  return a.unavailable?.();
}

export interface RunOptions {
  /** How audit events are sent; without it audit actions are unavailable for `auditUnavailable`. */
  poster?: AuditPoster;
  auditUnavailable?: string;
  /** Where container actions run (--containers); without it they are unavailable for `containersUnavailable`. */
  containers?: ContainerHost;
  containersUnavailable?: string;
  /** Pause between two actions (upstream default 100 ms). */
  sleepMs?: number;
  /** Called after each action. */
  onOutcome?(o: ActionOutcome): void;
  /** Asked before each action: true ends the run there (a signal in a --loop run). */
  stopped?(): boolean;
}

/** Runs the actions once each, in order. */
export async function runActions(actions: readonly Action[], opts: RunOptions = {}): Promise<ActionOutcome[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'rae-event-generator-'));
  // others may pass through (not list) it: actions that run a program as nobody reach their own dir
  chmodSync(tmp, 0o711);
  // Removed at process exit too: a signal mid-run ends the process from the container host's
  // handler (container-host.ts: its containers removed, then process.exit), and the finally
  // below never runs then.
  const removeTmp = () => rmSync(tmp, { recursive: true, force: true });
  process.once('exit', removeTmp);
  const postAudit: AuditPoster = (events) => (opts.poster ? opts.poster(events) : Promise.reject(new Error('no webhook')));
  const outcomes: ActionOutcome[] = [];
  try {
    for (const [i, a] of actions.entries()) {
      if (opts.stopped?.()) break;
      const base = { action: a.name, source: a.source, rule: a.rule, maturity: maturityOf(a) };
      const why = whyUnavailable(a, { poster: opts.poster, unavailable: opts.auditUnavailable }, { runner: opts.containers, unavailable: opts.containersUnavailable });
      let outcome: ActionOutcome;
      if (why) outcome = { ...base, status: 'unavailable', reason: why };
      else {
        const dir = mkdtempSync(join(tmp, 'action-'));
        try {
          const container = a.container ? await opts.containers!.container(a.container.privileged) : undefined;
          await a.run({ tmp: dir, postAudit, container });
          outcome = { ...base, status: 'performed' };
        } catch (err) {
          outcome = { ...base, status: err instanceof Unavailable ? 'unavailable' : 'failed', reason: (err as Error).message };
        }
        if (i < actions.length - 1 && (opts.sleepMs ?? 100) > 0 && !opts.stopped?.()) await new Promise((r) => setTimeout(r, opts.sleepMs ?? 100));
      }
      outcomes.push(outcome);
      opts.onOutcome?.(outcome);
    }
  } finally {
    process.off('exit', removeTmp);
    removeTmp();
  }
  return outcomes;
}
