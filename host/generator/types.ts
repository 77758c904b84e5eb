// The event generator's action: one behaviour that a named rule of the built-in sets detects,
// like falcosecurity/event-generator's `syscall.*` and `k8saudit.*` actions. Syscall actions do
// the behaviour for real and harmlessly (inside a temporary directory); audit actions POST a
// realistic audit.k8s.io/v1 event to the engine's webhook.
import type { RuleMaturity } from './rule-sets.js';

/** Where an action's events come from. */
type ActionSource = 'syscall' | 'k8s_audit';

/** What an action may use while it runs. */
interface ActionContext {
  /** A fresh temporary directory, removed after the run: the only place syscall actions write. */
  tmp: string;
  /** Sends one audit EventList to the webhook; rejects with the reason when it is not accepted. */
  postAudit(events: object[]): Promise<void>;
  /** The container a container action runs in (`Action.container`; --in-container), else undefined. */
  container?: ActionContainer;
}

/** A running container of the event generator: a runtime's (container.ts) or a cgroup box (cgroup-box.ts). */
export interface ActionContainer {
  /** What made it: a Docker or Podman Engine API runtime, or the generator itself ('cgroup', no runtime). */
  runtime: 'docker' | 'podman' | 'cgroup';
  id: string;
  name: string;
  /**
   * Runs `sh -c script` in the container, or the program and arguments of an array as they are
   * (`docker exec`; with a tty when asked); resolves with its exit status.
   */
  exec(command: string | readonly string[], opts?: { tty?: boolean; timeoutMs?: number }): Promise<number>;
}

/** Where container actions run: the containers of one runtime, or cgroup boxes (made on first use, removed by close). */
export interface ContainerHost {
  readonly runtime: ActionContainer['runtime'];
  /** The plain or the privileged container. */
  container(privileged: boolean): Promise<ActionContainer>;
  close(): Promise<void>;
}

/** One action. */
export interface Action {
  /** `syscall.ReadSensitiveFileUntrusted`, `k8saudit.CreatePrivilegedPod`, ... */
  name: string;
  source: ActionSource;
  /** The rule (of a built-in set: its maturity is read from rules/, rule-sets.ts) the action is meant to trigger. */
  rule: string;
  /** What the action does, in one line. */
  description: string;
  /** Why the action cannot work on this machine, or undefined when it can. */
  unavailable?(): string | undefined;
  /**
   * Set when the action runs inside a container: whether that one is privileged, and why a cgroup
   * box (no runtime: no container metadata, no runtime exec) cannot serve it, when it cannot.
   */
  container?: { privileged: boolean; runtimeOnly?: string };
  run(ctx: ActionContext): Promise<void>;
}

/** The outcome of one action in a run. */
export interface ActionOutcome {
  action: string;
  source: ActionSource;
  rule: string;
  /** The maturity of the rule's built-in set (rule-sets.ts). */
  maturity: RuleMaturity;
  status: 'performed' | 'unavailable' | 'failed';
  /** Why it was not performed (unavailable) or what went wrong (failed). */
  reason?: string;
}

/** Thrown by an action's run when it finds, only by trying, that it cannot work here (e.g. a name that does not resolve): the run reports it unavailable with the message, not failed. */
export class Unavailable extends Error {}
