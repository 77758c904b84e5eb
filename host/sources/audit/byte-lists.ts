// The list fields of ka-fields.ts and pod-fields.ts read straight from an event's bytes (the
// byte decoder, byte-event.ts): the indexed member's array is walked in place and each element's
// values are found with byte-value.ts's key-path walk (an object step takes the member's last
// occurrence, as JSON.parse keeps the last duplicate), so no member is decoded into objects. Each
// reader mirrors its object-path twin line for line: the same values in the same order, the same
// empty lists, the same missing field for a missing, null or odd-shaped member
// (test/sources/audit/decoder-differential.test.ts compares them on every field). A field with
// no reader here (volume_type: its object key order is the parser's) keeps the object path.
import { indexedPrefix } from './byte-index.js';
import { skipBlanks, skipValue } from './json-scan.js';
import { stringAt, textAt, valueAt } from './byte-value.js';
import { indexOf, listPath, ruleKey, subjectKind } from './ka-fields.js';
import { imageRepository, nonEmpty, securityKey } from './pod-fields.js';

type Value = string | string[] | undefined;

/** What a reader needs of an event: its body, where an indexed key path's value starts (-1: missing), and the tables of its arrays. */
export interface ListEvent {
  readonly body: Buffer;
  valueAt(slot: number, length: number, keys: readonly string[]): number;
  /** The table of the array at `at` over `names` (tableOf), kept for the event's other fields; undefined when no array is there. */
  tableAt(at: number, names: Names): Table | undefined;
}

type Reader = (f: ListEvent, arg: string | undefined) => Value;

/** The member names an array's table records for each element, with their bytes (all ASCII). */
export interface Names {
  names: readonly string[];
  bytes: readonly Uint8Array[];
}

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

const namesOf = (...names: string[]): Names => ({ names, bytes: names.map((n) => Uint8Array.from(n, (c) => c.charCodeAt(0))) });

/**
 * An array's elements in one walk: each element's start and where each of the names' members
 * starts in it (its last occurrence, as JSON.parse keeps the last; -1 when the member is missing
 * or the element is not an object), element e's member k at at[e * names + k].
 */
export interface Table {
  starts: number[];
  at: number[];
  names: Names;
}

/** Which of `names` the member name whose quote is at `i` and which ends before `end` is (a name with escapes, `escaped`, compared decoded), or -1. */
function nameIndex(b: Buffer, i: number, end: number, names: Names, escaped: boolean): number {
  const length = end - i - 2;
  const bytes = names.bytes;
  for (let k = 0; k < bytes.length; k++) {
    const name = bytes[k]!;
    if (name.length !== length) continue;
    let j = 0;
    while (j < length && b[i + 1 + j] === name[j]) j++;
    if (j === length) return k;
  }
  return escaped ? names.names.indexOf(JSON.parse(b.toString('utf8', i, end)) as string) : -1;
}

/** The table of the array at `at` (valid text) over `names`, or undefined when the value there is not an array. */
export function tableOf(b: Buffer, at: number, names: Names): Table | undefined {
  if (at < 0 || b[at] !== 0x5b) return undefined;
  const n = names.names.length;
  const t: Table = { starts: [], at: [], names };
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x5d) return t;
  for (;;) {
    t.starts.push(i);
    const base = t.at.length;
    for (let k = 0; k < n; k++) t.at.push(-1);
    if (b[i] === 0x7b) {
      // The element's members, each name compared as bytes; the walk gives the element's end too.
      i = skipBlanks(b, i + 1);
      if (b[i] !== 0x7d) {
        for (;;) {
          // The name's end, noting an escape on the way (stringEnd's loop); blanks are looked
          // for only where a byte is not the one the API server writes there.
          let e = i + 1;
          let escaped = false;
          for (let c = b[e]; c !== 0x22; c = b[e]) {
            if (c === 0x5c) {
              escaped = true;
              e += 2;
            } else e++;
          }
          const nameEnd = e + 1;
          const colon = b[nameEnd] === 0x3a ? nameEnd : skipBlanks(b, nameEnd);
          const valueAt = isBlank(b[colon + 1]) ? skipBlanks(b, colon + 1) : colon + 1;
          const k = nameIndex(b, i, nameEnd, names, escaped);
          if (k >= 0) t.at[base + k] = valueAt;
          i = skipValue(b, valueAt);
          if (b[i] !== 0x2c && b[i] !== 0x7d) i = skipBlanks(b, i);
          if (b[i] === 0x7d) break;
          i = skipBlanks(b, i + 1);
        }
      }
      i++;
    } else {
      i = skipValue(b, i);
    }
    i = skipBlanks(b, i);
    if (b[i] === 0x5d) return t;
    i = skipBlanks(b, i + 1);
  }
}

/** Where a field reads a list: the member's key path (read from its longest indexed prefix) and the names its table records. */
function listAt(names: Names, ...keys: string[]): (f: ListEvent) => Table | undefined {
  const { slot, length } = indexedPrefix(keys);
  return (f) => {
    const at = f.valueAt(slot, length, keys);
    return at < 0 ? undefined : f.tableAt(at, names);
  };
}

/** The elements of a table, all or only element `index` (>= 0); undefined when there is no such element (arrayAt). */
function pick(t: Table | undefined, index: number): number[] | undefined {
  if (t === undefined) return undefined;
  if (index < 0) return t.starts.map((_, e) => e);
  return index < t.starts.length ? [index] : undefined;
}

/** Where the value at `rest` below element e's member k starts, or -1 (getPath on the element). */
function below(b: Buffer, t: Table, e: number, k: number, rest: readonly string[]): number {
  const at = t.at[e * t.names.names.length + k]!;
  return at < 0 || rest.length === 0 ? at : valueAt(b, at, rest);
}

/** Calls `visit` with the start of each element of the array at `at`; none when it is not an array. */
function forEachElement(b: Buffer, at: number, visit: (i: number) => void): void {
  if (at < 0 || b[at] !== 0x5b) return;
  let i = skipBlanks(b, at + 1);
  if (b[i] === 0x5d) return;
  for (;;) {
    visit(i);
    i = skipBlanks(b, skipValue(b, i));
    if (b[i] === 0x5d) return;
    i = skipBlanks(b, i + 1);
  }
}

/** Every element of the array at `at` as text; none when it is not an array. */
function textsOf(b: Buffer, at: number, out: string[]): void {
  forEachElement(b, at, (i) => out.push(textAt(b, i)));
}

/** pod-fields.ts's present: the text at member k (then `rest`) of each element, elements without it adding nothing. */
function present(b: Buffer, t: Table, items: readonly number[], k: number, rest: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const e of items) {
    const v = below(b, t, e, k, rest);
    if (v >= 0) out.push(textAt(b, v));
  }
  return out;
}

/** pod-fields.ts's required: the text of member k of each element; any element without it makes the field missing. */
function required(b: Buffer, t: Table, items: readonly number[], k: number): string[] | undefined {
  const out: string[] = [];
  for (const e of items) {
    const v = below(b, t, e, k, []);
    if (v < 0) return undefined;
    out.push(textAt(b, v));
  }
  return out;
}

/** pod-fields.ts's flatten: every element of the arrays at member k (then `rest`) of each element. */
function flatten(b: Buffer, t: Table, items: readonly number[], k: number, rest: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const e of items) textsOf(b, below(b, t, e, k, rest), out);
  return out;
}

/** The members of a container the per-container fields read. */
const CONTAINER = namesOf('name', 'image', 'command', 'args', 'securityContext', 'ports');
const [NAME, IMAGE, COMMAND, ARGS, SECURITY_CONTEXT, PORTS] = [0, 1, 2, 3, 4, 5] as const;
const POD_SECURITY = (() => {
  const keys = ['requestObject', 'spec', 'securityContext'];
  const { slot, length } = indexedPrefix(keys);
  return (f: ListEvent) => f.valueAt(slot, length, keys);
})();

type ContainerReader = (f: ListEvent, t: Table, items: number[]) => Value;

/** pod-fields.ts's containerField over a table of containers; undefined for a property it has no reader of. */
function containerReader(prop: string): ContainerReader | undefined {
  switch (prop) {
    case 'name':
    case 'image': {
      const k = prop === 'name' ? NAME : IMAGE;
      return (f, t, items) => required(f.body, t, items, k);
    }
    case 'image.repository':
      return (f, t, items) => required(f.body, t, items, IMAGE)?.map(imageRepository);
    case 'command':
    case 'args': {
      const k = prop === 'command' ? COMMAND : ARGS;
      return (f, t, items) => nonEmpty(flatten(f.body, t, items, k));
    }
    case 'add_capabilities': {
      const rest = ['capabilities', 'add'];
      return (f, t, items) => nonEmpty(flatten(f.body, t, items, SECURITY_CONTEXT, rest));
    }
    case 'eff_run_as_user':
    case 'eff_run_as_group': {
      // Container security context, else the pod's, else 0.
      const rest = [prop === 'eff_run_as_user' ? 'runAsUser' : 'runAsGroup'];
      return (f, t, items) => {
        const b = f.body;
        const ctx = POD_SECURITY(f);
        const pod = ctx < 0 ? -1 : valueAt(b, ctx, rest);
        const dflt = pod < 0 ? '0' : textAt(b, pod);
        return nonEmpty(
          items.map((e) => {
            const v = below(b, t, e, SECURITY_CONTEXT, rest);
            return v < 0 ? dflt : textAt(b, v);
          }),
        );
      };
    }
    case 'host_port':
      return (f, t, items) => {
        const b = f.body;
        const out: string[] = [];
        for (const e of items) {
          forEachElement(b, below(b, t, e, PORTS, []), (i) => {
            // The object path's `hostPort ?? containerPort`: a null hostPort falls through too.
            let v = valueAt(b, i, HOST_PORT);
            if (v < 0 || b[v] === 0x6e) v = valueAt(b, i, CONTAINER_PORT);
            if (v >= 0) out.push(textAt(b, v));
          });
        }
        return nonEmpty(out);
      };
    default: {
      const key = securityKey(prop);
      if (key === undefined) return undefined;
      const rest = [key];
      return (f, t, items) => nonEmpty(present(f.body, t, items, SECURITY_CONTEXT, rest));
    }
  }
}
const HOST_PORT = ['hostPort'];
const CONTAINER_PORT = ['containerPort'];

const CONTAINERS = listAt(CONTAINER, 'requestObject', 'spec', 'containers');
const VOLUME = namesOf('hostPath', 'flexVolume');
const VOLUMES = listAt(VOLUME, 'requestObject', 'spec', 'volumes');
const HOST_PATH = ['path'];
const POD_LIST = /^ka\.req\.pod\.(containers|initContainers|ephemeralContainers)\.(.+)$/;

/** The reader of a pod-spec list field, or undefined. */
function podReader(name: string): Reader | undefined {
  const pod = POD_LIST.exec(name);
  if (pod) {
    const list = listAt(CONTAINER, 'requestObject', 'spec', pod[1]!);
    const read = containerReader(pod[2]!);
    if (read === undefined) return undefined;
    return (f, arg) => {
      const t = list(f);
      const items = pick(t, indexOf(arg));
      return items && read(f, t!, items);
    };
  }
  if (name === 'ka.req.pod.volumes.hostpath' || name === 'ka.req.pod.volumes.flexvolume_driver') {
    const [k, rest] = name.endsWith('hostpath') ? [0, HOST_PATH] : [1, ['driver']];
    return (f, arg) => {
      const t = VOLUMES(f);
      const items = pick(t, indexOf(arg));
      return items && nonEmpty(present(f.body, t!, items, k, rest));
    };
  }
  switch (name) {
    case 'ka.req.volume.hostpath':
      return (f, arg) => {
        const t = VOLUMES(f);
        const items = pick(t, -1);
        if (!items || arg === undefined || arg.length === 0) return undefined;
        const prefix = arg.endsWith('*') ? arg.slice(0, -1) : undefined;
        const hit = present(f.body, t!, items, 0, HOST_PATH).some((p) => (prefix !== undefined && p.startsWith(prefix)) || p === arg);
        return hit ? 'true' : 'false';
      };
    case 'ka.req.container.privileged': {
      const rest = ['privileged'];
      return (f) => {
        const b = f.body;
        const t = CONTAINERS(f);
        if (t === undefined) return undefined;
        // `=== true` on the decoded value: only the literal true (a string starts with a quote).
        for (let e = 0; e < t.starts.length; e++) if (b[below(b, t, e, SECURITY_CONTEXT, rest)] === 0x74) return 'true';
        return 'false';
      };
    }
    case 'ka.req.container.image':
    case 'ka.req.container.image.repository': {
      const read = containerReader(name === 'ka.req.container.image' ? 'image' : 'image.repository')!;
      return (f) => {
        const t = CONTAINERS(f);
        const items = pick(t, 0);
        return items && read(f, t!, items)?.[0];
      };
    }
    case 'ka.req.service.ports':
      return textList(listAt(NONE, 'requestObject', 'spec', 'ports'), true);
    default:
      return undefined;
  }
}

const NONE = namesOf();

/** A field giving each element of the array at a member as text: all, or element [arg] when `indexed`. */
function textList(list: (f: ListEvent) => Table | undefined, indexed: boolean): Reader {
  return (f, arg) => {
    const b = f.body;
    const t = list(f);
    const items = pick(t, indexed ? indexOf(arg) : -1);
    return items && nonEmpty(items.map((e) => textAt(b, t!.starts[e]!)));
  };
}

const RULE = namesOf('apiGroups', 'nonResourceURLs', 'verbs', 'resources');
const RULES = listAt(RULE, 'requestObject', 'rules');
const SUBJECT = namesOf('kind', 'name', 'namespace');
const SUBJECTS = listAt(SUBJECT, 'requestObject', 'subjects');

/** The reader of a list field of ka-fields.ts (whole lists, role rules, binding subjects, source addresses), or undefined. */
function kaListReader(name: string): Reader | undefined {
  const path = listPath(name);
  // The rules' and subjects' tables are the ones their per-member fields read (walked once for all of them).
  if (path !== undefined) return textList(name === 'ka.req.role.rules' ? RULES : name === 'ka.req.binding.subjects' ? SUBJECTS : listAt(NONE, ...path), false);
  const rule = ruleKey(name);
  if (rule !== undefined) {
    const k = RULE.names.indexOf(rule);
    return (f, arg) => {
      const t = RULES(f);
      const items = pick(t, indexOf(arg));
      return items && nonEmpty(flatten(f.body, t!, items, k));
    };
  }
  const kind = subjectKind(name);
  if (kind !== undefined) {
    const withNamespace = name.endsWith('_ns_names');
    return (f) => {
      const b = f.body;
      const t = SUBJECTS(f);
      if (t === undefined) return undefined;
      const out: string[] = [];
      for (let e = 0; e < t.starts.length; e++) {
        if (stringAt(b, below(b, t, e, 0, [])) !== kind) continue;
        const n = below(b, t, e, 1, []);
        if (n < 0) continue;
        if (!withNamespace) out.push(textAt(b, n));
        else {
          const ns = below(b, t, e, 2, []);
          out.push(`${ns < 0 ? '' : textAt(b, ns)}:${textAt(b, n)}`);
        }
      }
      return nonEmpty(out);
    };
  }
  if (name === 'ka.sourceips') return textList(listAt(NONE, 'sourceIPs'), true);
  return undefined;
}

/** The byte reader of a ka.* list field, or undefined when the field keeps the object path. */
export function byteListReader(name: string): Reader | undefined {
  return podReader(name) ?? kaListReader(name);
}
