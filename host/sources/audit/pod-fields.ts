// Pod-spec list fields of the k8saudit plugin: per-container values of
// `requestObject.spec.{containers,initContainers,ephemeralContainers}[*]` (an optional [N]
// selects one container) and per-volume values of `requestObject.spec.volumes[*]`
// (plugins:plugins/k8saudit/pkg/k8saudit/extract.go). Lists come back as string arrays;
// undefined = the field is missing (no such list, index out of range, or nothing extracted:
// libsinsp treats an empty plugin list as missing, plugin_filtercheck.cpp `res_len == 0`).
import { asText, getPath, isObject, type Json } from './json-value.js';

export type ContainerList = 'containers' | 'initContainers' | 'ephemeralContainers';

/** The elements of an array at `keys`, all or only element `index` (>= 0); undefined if absent. */
export function arrayAt(root: Json, index: number, ...keys: string[]): Json[] | undefined {
  const arr = getPath(root, ...keys);
  if (!Array.isArray(arr)) return undefined;
  if (index < 0) return arr;
  return index < arr.length ? [arr[index]] : undefined;
}

/** A non-empty list or undefined. */
export const nonEmpty = (xs: string[]): string[] | undefined => (xs.length > 0 ? xs : undefined);

/**
 * The repository part of an image reference: the `@digest` and a `:tag` after the last `/`
 * removed, so registry ports survive (`reg:5000/app:1.0` -> `reg:5000/app`). Older plugin
 * versions split on the first ':' and cut such registries short.
 */
export function imageRepository(image: string): string {
  let s = image;
  const at = s.indexOf('@');
  if (at >= 0) s = s.slice(0, at);
  const colon = s.lastIndexOf(':');
  if (colon > s.lastIndexOf('/')) s = s.slice(0, colon);
  return s;
}

/** Every element of the arrays found at `keys` in each item (items without it add nothing). */
function flatten(items: Json[], ...keys: string[]): string[] {
  return items.flatMap((c) => {
    const v = getPath(c, ...keys);
    return Array.isArray(v) ? v.map(asText) : [];
  });
}

/** Values at `keys` in each item, items without it adding nothing. */
function present(items: Json[], ...keys: string[]): string[] {
  return items.flatMap((c) => {
    const v = getPath(c, ...keys);
    return v === undefined ? [] : [asText(v)];
  });
}

/** Values at `key` in each item; any item without it makes the whole field missing. */
function required(items: Json[], key: string): string[] | undefined {
  const out: string[] = [];
  for (const c of items) {
    const v = getPath(c, key);
    if (v === undefined) return undefined;
    out.push(asText(v));
  }
  return out;
}

const SECURITY: Record<string, string> = {
  privileged: 'privileged',
  allow_privilege_escalation: 'allowPrivilegeEscalation',
  read_only_fs: 'readOnlyRootFilesystem',
  run_as_user: 'runAsUser',
  run_as_group: 'runAsGroup',
  proc_mount: 'procMount',
};

/** The securityContext member a per-container property reads, or undefined. */
export const securityKey = (prop: string): string | undefined => (Object.hasOwn(SECURITY, prop) ? SECURITY[prop] : undefined);

/** `ka.req.pod.<list>.<prop>`; undefined when missing or the property is unknown. */
export function containerField(root: Json, list: ContainerList, prop: string, index: number): string[] | undefined {
  const items = arrayAt(root, index, 'requestObject', 'spec', list);
  if (!items) return undefined;
  switch (prop) {
    case 'name':
    case 'image':
      return required(items, prop);
    case 'image.repository':
      return required(items, 'image')?.map(imageRepository);
    case 'command':
    case 'args':
      return nonEmpty(flatten(items, prop));
    case 'add_capabilities':
      return nonEmpty(flatten(items, 'securityContext', 'capabilities', 'add'));
    case 'eff_run_as_user':
    case 'eff_run_as_group': {
      // Container security context, else the pod's, else 0 ("uses 0 if no uid is specified").
      const key = prop === 'eff_run_as_user' ? 'runAsUser' : 'runAsGroup';
      const pod = getPath(root, 'requestObject', 'spec', 'securityContext', key);
      const dflt = pod === undefined ? '0' : asText(pod);
      return nonEmpty(
        items.map((c) => {
          const v = getPath(c, 'securityContext', key);
          return v === undefined ? dflt : asText(v);
        }),
      );
    }
    case 'host_port':
      return nonEmpty(
        items.flatMap((c) => {
          const ports = getPath(c, 'ports');
          if (!Array.isArray(ports)) return [];
          // When hostNetwork is true the containerPort is the host port.
          return ports.flatMap((p) => {
            const v = getPath(p, 'hostPort') ?? getPath(p, 'containerPort');
            return v === undefined ? [] : [asText(v)];
          });
        }),
      );
    default: {
      const key = SECURITY[prop];
      return key ? nonEmpty(present(items, 'securityContext', key)) : undefined;
    }
  }
}

/** `ka.req.pod.volumes.*` list fields. */
export function volumeField(root: Json, prop: string, index: number): string[] | undefined {
  const volumes = arrayAt(root, index, 'requestObject', 'spec', 'volumes');
  if (!volumes) return undefined;
  if (prop === 'hostpath') return nonEmpty(present(volumes, 'hostPath', 'path'));
  if (prop === 'flexvolume_driver') return nonEmpty(present(volumes, 'flexVolume', 'driver'));
  if (prop === 'volume_type') return nonEmpty(volumes.flatMap((v) => (isObject(v) ? Object.keys(v).filter((k) => k !== 'name') : [])));
  return undefined;
}

/** Deprecated `ka.req.volume.hostpath[path]`: "true" if a volume uses the path (`*` suffix = prefix). */
export function volumeHasHostPath(root: Json, arg: string): string | undefined {
  const volumes = arrayAt(root, -1, 'requestObject', 'spec', 'volumes');
  if (!volumes || arg.length === 0) return undefined;
  const prefix = arg.endsWith('*') ? arg.slice(0, -1) : undefined;
  const hit = present(volumes, 'hostPath', 'path').some((p) => (prefix !== undefined && p.startsWith(prefix)) || p === arg);
  return hit ? 'true' : 'false';
}

/** Deprecated `ka.req.container.privileged`: "true" if any container has privileged=true. */
export function anyContainerPrivileged(root: Json): string | undefined {
  const items = arrayAt(root, -1, 'requestObject', 'spec', 'containers');
  if (!items) return undefined;
  return items.some((c) => getPath(c, 'securityContext', 'privileged') === true) ? 'true' : 'false';
}
