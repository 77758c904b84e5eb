// The readiness of `rae run`: one status per component (forwarder, engine, api, module, each
// source), set by whoever starts it. The engine is ready when no component is starting or
// failed; `off` (disabled on purpose, or unsupported such as the kernel source without BPF) does
// not count against it. The forwarder serves it on /healthz and /readyz (docs/forwarder.md).
// Consumes component states; produces a Readiness and, on every change, `onChange`.
import type { ComponentStatus, Readiness } from '../forwarder/index.js';

/** The component states of one run. */
export class ReadinessBoard {
  private readonly parts = new Map<string, ComponentStatus>();

  constructor(private readonly onChange?: (readiness: Readiness, changed: ComponentStatus) => void) {}

  /** Sets one component's status (a component keeps its first position in the report). */
  set(name: string, status: Omit<ComponentStatus, 'name'>): void {
    const next = { name, ...status };
    const prev = this.parts.get(name);
    if (prev && JSON.stringify(prev) === JSON.stringify(next)) return;
    this.parts.set(name, next);
    this.onChange?.(this.report(), next);
  }

  /** Every component and whether the engine is ready. */
  report(): Readiness {
    const components = [...this.parts.values()];
    return { ready: components.length > 0 && components.every((c) => c.state === 'up' || c.state === 'off'), components };
  }
}

/** `name (error)` of each component that keeps the engine from being ready. */
export function notReady(r: Readiness): string {
  return r.components
    .filter((c) => c.state !== 'up' && c.state !== 'off')
    .map((c) => `${c.name} ${c.state}${c.error ? ` (${c.error})` : ''}`)
    .join(', ');
}
