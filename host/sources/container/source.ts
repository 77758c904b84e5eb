// What every runtime metadata source offers the cache (cache.ts): a list at start, one container
// by id, and a stream of lifecycle events. Implemented by cri.ts (CRI + containerd events) and
// engine-api.ts (Docker and Podman REST).
import type { ContainerRecord } from './record.js';

/** A lifecycle event from the runtime: `id` as the runtime gives it (full or short). */
export interface RuntimeEvent {
  kind: 'create' | 'start' | 'delete';
  id: string;
}

/** A stopped watch. */
export interface Watch {
  close(): void;
}

/** One container runtime's metadata API. */
export interface MetadataSource {
  /** Name for logs: `cri`, `docker`, `podman`. */
  readonly name: string;
  /** The socket path it talks to. */
  readonly socket: string;
  /** Every running container. */
  list(): Promise<ContainerRecord[]>;
  /** One container by full or 12-character id; undefined when the runtime has no such container. */
  get(id: string): Promise<ContainerRecord | undefined>;
  /** Follows lifecycle events until closed; `onError` once when the stream fails or ends. */
  watch(onEvent: (e: RuntimeEvent) => void, onError: (err: Error) => void): Watch;
  close(): void;
}
