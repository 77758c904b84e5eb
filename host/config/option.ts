// Falco's `-o key=value` (and the RAE_<SECTION>_<KEY> variables) over the configuration: any key
// path, dotted, each step optionally indexed (`key[N]` sets element N of a list, `key[]` appends);
// under a key whose default is an empty mapping (forwarder.outputs, forwarder.customfields, ...)
// nested mappings are created as needed, as yaml-cpp's node assignment does in Falco
// (falco_configuration::set_cmdline_option). Values are typed as Falco reads them: by the key's
// default where the key has one (numbers, yaml-cpp's booleans, strings, lists as `[a,b]`), as a
// YAML scalar in a free-form mapping (its consumer checks it), and a `{...}` value sets a whole
// mapping. Consumes a configuration object and its defaults (the shape); produces a problem
// naming the key, or undefined when the value was set.
import { parse as parseYaml } from 'yaml';
import type { ConfigProblem } from './problem.js';

/** One step of a key path: a mapping key, then optionally an index into the list under it. */
interface Step {
  key: string;
  index?: number | 'append';
}

type Mapping = Record<string, unknown>;

const isMapping = (v: unknown): v is Mapping => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A mapping whose default is empty takes any key: its consumer checks what it holds. */
const isFreeForm = (shape: unknown): boolean => isMapping(shape) && Object.keys(shape).length === 0;

// yaml-cpp's convert<bool> (what Falco's config.get_scalar<bool> accepts)
const TRUE = ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'];
const FALSE = ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'];

/** Splits `a.b[2].c[]` into steps, or says what is wrong with the path. */
function parsePath(path: string): Step[] | string {
  const steps: Step[] = [];
  for (const part of path.split('.')) {
    const m = part.match(/^([^[\]]+)(?:\[(\d*)\])?$/);
    if (!m) return `'${part}' is not a key (expected name, name[N] or name[])`;
    steps.push(m[2] === undefined ? { key: m[1]! } : { key: m[1]!, index: m[2] === '' ? 'append' : Number(m[2]) });
  }
  return steps;
}

/** A value given as text converted to the type of the key's default `cur`. */
function typedValue(cur: unknown, text: string): { value: unknown } | { expected: string } {
  if (Array.isArray(cur)) {
    const m = text.match(/^\[(.*)\]$/s);
    return {
      value: m
        ? m[1]!
            .split(',')
            .map((x) => x.trim())
            .filter((x) => x !== '')
        : [text],
    };
  }
  if (typeof cur === 'number') {
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? { value: n } : { expected: 'a number' };
  }
  if (typeof cur === 'boolean') return TRUE.includes(text) ? { value: true } : FALSE.includes(text) ? { value: false } : { expected: 'true or false' };
  return { value: text };
}

/** A value in a free-form mapping: a YAML scalar (true, 5, text) or, written so, a flow list or mapping. */
function yamlValue(text: string): unknown {
  try {
    const v: unknown = parseYaml(text);
    if (v === null || v === undefined) return '';
    if (typeof v === 'object' && !/^\s*[[{]/.test(text)) return text;
    return v;
  } catch {
    return text;
  }
}

/** `value` set into `list` at `index` (append: at the end); a hole is refused. */
function setElement(list: unknown[], index: number | 'append', value: unknown): string | undefined {
  const i = index === 'append' ? list.length : index;
  if (i > list.length) return `index ${i} is past the end of the list (${list.length} items; use [] to append)`;
  list[i] = value;
  return undefined;
}

/** The options of one setKey call. */
export interface SetKeyOptions {
  /** The defaults: which keys exist, their types, and which mappings are free-form. */
  shape: Mapping;
  /** Appends to a list key instead of replacing it (a list key given again with -o). */
  append?: boolean;
  /** Keys of the root that exist although their default is unset (hostname). */
  optionalRootKeys?: readonly string[];
}

/** Sets the key path `key` of `root` from `text`; a problem names the key and says what is wrong. */
export function setKey(root: Mapping, key: string, text: string, options: SetKeyOptions): ConfigProblem | undefined {
  const steps = parsePath(key);
  if (typeof steps === 'string') return { key, message: steps };
  const fail = (message: string): ConfigProblem => ({ key, message });
  let node: Mapping = root;
  let shape: unknown = options.shape;
  let free = false;
  for (let n = 0; n < steps.length; n++) {
    const { key: name, index } = steps[n]!;
    const last = n === steps.length - 1;
    const at = steps
      .slice(0, n + 1)
      .map((s) => s.key)
      .join('.');
    const childShape: unknown = free ? undefined : (shape as Mapping)[name];
    if (!free && childShape === undefined && !(n === 0 && options.optionalRootKeys?.includes(name) && last && index === undefined)) return fail('unknown key');
    const childFree: boolean = free || isFreeForm(childShape);
    if (last) return setLeaf(node, name, index, text, { free, childFree, shape: childShape, append: options.append ?? false, at }, fail);
    if (index !== undefined) {
      // a list of mappings (only in free-form mappings: no fixed key holds one)
      if (!childFree) return fail(`${at} is not a list of mappings`);
      const list = node[name] ?? (node[name] = []);
      if (!Array.isArray(list)) return fail(`${at} is not a list`);
      const slot = index === 'append' ? list.length : index;
      if (slot === list.length) list.push({});
      const problem = slot > list.length ? `index ${slot} is past the end of ${at} (${list.length} items; use [] to append)` : undefined;
      if (problem) return fail(problem);
      if (!isMapping(list[slot])) return fail(`${at}[${slot}] is not a mapping`);
      node = list[slot] as Mapping;
    } else {
      if (childFree && node[name] === undefined) node[name] = {};
      const child = node[name];
      if (!isMapping(child)) return fail(`${at} is ${describe(child)}, not a mapping`);
      node = child;
    }
    shape = childShape;
    free = childFree;
  }
  return undefined;
}

/** What a value is, for messages. */
function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === undefined || v === null) return 'unset';
  return `a ${typeof v}`;
}

interface LeafContext {
  /** The leaf's mapping is free-form (any key). */
  free: boolean;
  /** The leaf is, or lies under, a free-form mapping. */
  childFree: boolean;
  shape: unknown;
  append: boolean;
  at: string;
}

/** Sets the last step of a key path. */
function setLeaf(node: Mapping, name: string, index: Step['index'], text: string, c: LeafContext, fail: (m: string) => ConfigProblem): ConfigProblem | undefined {
  const cur = node[name];
  const flowMapping = /^\s*\{.*\}\s*$/s.test(text);
  if (c.childFree && !c.free) {
    // a free-form mapping itself: a whole {…} mapping, nothing else
    if (index !== undefined || !flowMapping) return fail(`is a mapping; set one of its keys (${c.at}.KEY=VALUE) or give a {…} mapping`);
    const v = yamlValue(text);
    if (!isMapping(v)) return fail('expected a {…} mapping');
    node[name] = v;
    return undefined;
  }
  if (c.free) {
    const v = yamlValue(text);
    if (index === undefined) node[name] = v;
    else {
      const list = cur ?? (node[name] = []);
      if (!Array.isArray(list)) return fail(`${c.at} is ${describe(list)}, not a list`);
      const problem = setElement(list, index, v);
      if (problem) return fail(problem);
    }
    return undefined;
  }
  if (isMapping(c.shape)) return fail('is a section; set one of its keys');
  if (index !== undefined) {
    if (!Array.isArray(cur)) return fail(`${c.at} is ${describe(cur)}, not a list: [] and [N] index lists`);
    const problem = setElement(cur, index, text);
    return problem ? fail(problem) : undefined;
  }
  const typed = typedValue(c.shape ?? cur, text);
  if ('expected' in typed) return fail(`expected ${typed.expected}, not '${text}'`);
  node[name] = c.append && Array.isArray(cur) ? [...cur, ...(typed.value as string[])] : typed.value;
  return undefined;
}
