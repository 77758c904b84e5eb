// The rule tally's measuring parts (rule-tally.ts, docs/rule-cost.md): the clock a sampled call
// and a profile's runs are timed on, and the recent samples whose median a rate or the
// calibration is.

/** The process's CPU time, seconds (user and system, every thread of the process). */
export function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/**
 * Times a stretch of this thread's work: the lesser of the process's CPU time and the wall time
 * over it, both upper bounds of the thread's own time. CPU time leaves out the time the machine
 * gave the core to others (at load 18 on 2 cores, runs of a few milliseconds read 10 to 15 times
 * their CPU time in wall time) but counts the process's other threads (V8's compilers, the
 * garbage collector), whose time the kernel adds when they are next accounted (seen: a 140 µs
 * run read 185 µs); wall time is the reverse. The CPU clock is read outside the wall clock, so
 * the object it allocates (and a collection that may cause) falls outside the wall reading.
 */
export class Stopwatch {
  private cpu = 0;
  private wall = 0;

  start(): void {
    this.cpu = cpuSeconds();
    this.wall = performance.now();
  }

  /** Seconds since start(). */
  seconds(): number {
    const wall = (performance.now() - this.wall) / 1000;
    return Math.min(wall, cpuSeconds() - this.cpu);
  }
}

/** The last `size` values of a series, and their median (undefined while empty; kept from one add to the next: it is read for every pair at every read of the counters). */
export class Recent {
  private readonly xs: number[] = [];
  /** The same values in order, kept by insertion (the calibration adds one at every sampled call: no copy, no sort). */
  private readonly sorted: number[] = [];
  private at = 0;
  private mid: number | undefined;
  constructor(private readonly size: number) {}

  add(x: number): void {
    const s = this.sorted;
    if (this.xs.length < this.size) this.xs.push(x);
    else {
      const i = this.at++ % this.size;
      const old = s.indexOf(this.xs[i]!);
      // indexOf never finds NaN
      s.splice(old >= 0 ? old : s.findIndex(Number.isNaN), 1);
      this.xs[i] = x;
    }
    let j = s.length;
    while (j > 0 && s[j - 1]! > x) j--;
    s.splice(j, 0, x);
    const m = s.length >> 1;
    this.mid = s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  }

  clear(): void {
    this.xs.length = 0;
    this.sorted.length = 0;
    this.at = 0;
    this.mid = undefined;
  }

  /** Values held (at most `size`). */
  get count(): number {
    return this.xs.length;
  }

  get median(): number | undefined {
    return this.mid;
  }
}
