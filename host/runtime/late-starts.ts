// Container starts judged before the container's metadata came, held to be judged once more when
// it comes. Falco's rules judge a container's start on its init's exec (container_started: spawned_process
// and proc.vpid=1 and container); when the runtime answers after that exec (a loaded node), the
// exec was judged with container.* and k8s.* missing and those rules stayed silent (falco#570).
// Consumes the held event's fields as the byte path read them at its first judgment (fieldsOf:
// the record and the process as they were then, so a later exec or exit of the process changes
// nothing) and the names of the rules that fired for it then; produces them again for the kernel
// path (kernel-path.ts judgeLate) when its container's metadata comes. Bounded by count (the
// oldest goes first) and age; every start dropped unjudged is counted (stats.lateStartsDropped).

import type { EngineStats } from './engine-types.js';

/** A start judged without its container's metadata. */
export interface HeldStart {
  /** The container whose metadata it waits for. */
  key: string;
  /** Every field of the event as it was judged (the kernel translator's fieldsOf). */
  fields: Record<string, unknown>;
  evtType: string | undefined;
  timeNs: bigint;
  num: bigint;
  /** The rules that fired for it at its first judgment (they do not fire again). */
  fired: ReadonlySet<string>;
}

/** Held starts at most, and how long one waits for its metadata (the runtime's lookup deadline is 5 s by default). */
const LATE_START_LIMITS = { count: 256, ageMs: 120_000 } as const;

/** The held starts, oldest first. */
export class LateStarts {
  private held: { start: HeldStart; at: number }[] = [];

  constructor(
    private readonly stats: Pick<EngineStats, 'lateStartsHeld' | 'lateStartsDropped'>,
    private readonly limits: { count: number; ageMs: number } = LATE_START_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Holds a start until its container's metadata comes; drops (counted) the oldest when full. */
  hold(start: HeldStart): void {
    this.expire();
    if (this.held.length >= this.limits.count) this.drop(this.held.length - this.limits.count + 1);
    this.held.push({ start, at: this.now() });
    this.stats.lateStartsHeld++;
  }

  /** Takes the held starts of container `key` (its metadata came), in the order they were held. */
  take(key: string): HeldStart[] {
    this.expire();
    const out = this.held.filter((h) => h.start.key === key).map((h) => h.start);
    if (out.length > 0) this.held = this.held.filter((h) => h.start.key !== key);
    return out;
  }

  /** Starts held now. */
  get size(): number {
    return this.held.length;
  }

  /** Drops (counted) the starts held longer than the age limit. */
  private expire(): void {
    const old = this.now() - this.limits.ageMs;
    let n = 0;
    while (n < this.held.length && this.held[n]!.at < old) n++;
    this.drop(n);
  }

  private drop(n: number): void {
    if (n <= 0) return;
    this.held.splice(0, n);
    this.stats.lateStartsDropped += n;
  }
}
