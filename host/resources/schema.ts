// A small structural schema (the subset of OpenAPI v3 the module's resources use) and its
// validator over `yaml` nodes. Consumes a parsed YAML node and a Schema; produces located
// diagnostics (LOAD_ERR_YAML_VALIDATE), one per problem, so a manifest reports every mistake at
// once. Unlike the orchestrator's structural schemas, unknown fields are errors, not pruned
// silently (reference/module-and-forwarder.md §2: pruning hides typos such as `enable: false`).
import { isMap, isScalar, isSeq, type Node, type Pair, type Scalar, type YAMLMap } from 'yaml';
import { type Diagnostic, diagnostic, type ItemType, type Location, type SourceText } from '../engine/index.js';

/** A schema node. `label` names the object in the context chain (`rule 'x'`), by its `name` field. */
export type Schema =
  | {
      type: 'object';
      properties: Record<string, Schema>;
      required?: readonly string[];
      /** Exactly one of these keys must be present (OpenAPI oneOf of `required` lists). */
      exactlyOne?: readonly string[];
      /** Any key, each value checked against this schema (a map such as metadata.labels). */
      additional?: Schema;
      label?: ItemType;
    }
  | { type: 'array'; items: Schema }
  | { type: 'string'; enum?: readonly string[]; pattern?: { re: RegExp; text: string }; maxLength?: number }
  | { type: 'boolean' }
  | { type: 'integer'; enum?: readonly number[] }
  | { type: 'int-or-string' };

/** Validation context: the text (for positions) and the chain so far. */
export interface SchemaContext {
  src: SourceText;
  ctx: Location[];
}

/** The location of a node (its first character), as a `value for 'path'` link. */
export function valueLocation(src: SourceText, path: string, node: Node | null | undefined, fallback = 0): Location {
  return { itemType: 'value for', itemName: path, position: src.position(node?.range?.[0] ?? fallback) };
}

/** The pairs of a mapping keyed by their scalar key text. */
export function mapPairs(map: YAMLMap<unknown, unknown>): Map<string, Pair<unknown, unknown>> {
  const out = new Map<string, Pair<unknown, unknown>>();
  for (const p of map.items) out.set(isScalar(p.key) ? String(p.key.value) : '', p);
  return out;
}

function isNull(n: unknown): boolean {
  return n === null || n === undefined || (isScalar(n) && n.value === null);
}

function describe(n: Node | null): string {
  if (isNull(n)) return 'null';
  if (isMap(n)) return 'a mapping';
  if (isSeq(n)) return 'a list';
  const v = (n as Scalar).value;
  const shown = JSON.stringify(typeof v === 'bigint' ? String(v) : v);
  return `${typeof v === 'number' || typeof v === 'bigint' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : 'a string'} (${shown})`;
}

const TYPE_NAMES = { object: 'a mapping', array: 'a list', string: 'a string', boolean: 'a boolean (true or false)', integer: 'an integer', 'int-or-string': 'an integer or a string' } as const;

/** Validates `node` against `schema`; appends every problem to `out`. `path` is the dotted field path. */
export function validateNode(node: Node | null, schema: Schema, path: string, c: SchemaContext, out: Diagnostic[]): void {
  const fail = (message: string, at: Node | null = node): void => {
    out.push(diagnostic('LOAD_ERR_YAML_VALIDATE', message, path ? [...c.ctx, valueLocation(c.src, path, at)] : c.ctx));
  };
  const wrongType = (): void => fail(`'${path}' must be ${TYPE_NAMES[schema.type]}, not ${describe(node)}`);
  switch (schema.type) {
    case 'object': {
      if (!isMap(node)) return wrongType();
      const pairs = mapPairs(node as YAMLMap<unknown, unknown>);
      let ctx = c.ctx;
      if (schema.label) {
        const nameNode = pairs.get('name')?.value;
        const name = isScalar(nameNode) && typeof nameNode.value === 'string' ? nameNode.value : '';
        ctx = [...c.ctx, { itemType: schema.label, itemName: name, position: c.src.position(node.range?.[0] ?? 0) }];
      }
      const inner: SchemaContext = { src: c.src, ctx };
      const failHere = (message: string, at: Node | null): void => {
        out.push(diagnostic('LOAD_ERR_YAML_VALIDATE', message, path ? [...ctx, valueLocation(c.src, path, at)] : ctx));
      };
      if (schema.exactlyOne) {
        const present = schema.exactlyOne.filter((k) => pairs.has(k));
        if (present.length !== 1) {
          const has = present.length === 0 ? 'none' : present.join(' and ');
          return failHere(`'${path}' must have exactly one of ${schema.exactlyOne.join(', ')}; it has ${has}`, node);
        }
      }
      for (const [key, pair] of pairs) {
        const sub = path ? `${path}.${key}` : key;
        const child = schema.properties[key] ?? schema.additional;
        if (!child) {
          const known = Object.keys(schema.properties).join(', ');
          out.push(diagnostic('LOAD_ERR_YAML_VALIDATE', `unknown field '${sub}' (known fields: ${known})`, [...ctx, valueLocation(c.src, sub, pair.key as Node)]));
          continue;
        }
        validateNode(pair.value as Node | null, child, sub, inner, out);
      }
      const missing = (schema.required ?? []).filter((k) => !pairs.has(k)).map((k) => `'${path ? `${path}.${k}` : k}'`);
      if (missing.length > 0) failHere(`missing required field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, node);
      return;
    }
    case 'array': {
      if (!isSeq(node)) return wrongType();
      (node.items as Array<Node | null>).forEach((item, i) => validateNode(item, schema.items, `${path}[${i}]`, c, out));
      return;
    }
    case 'string': {
      if (!isScalar(node) || typeof node.value !== 'string') return wrongType();
      const v = node.value;
      if (schema.enum && !schema.enum.includes(v)) {
        const close = schema.enum.find((e) => e.toLowerCase() === v.toLowerCase() || (v.toLowerCase() === 'info' && e === 'Informational'));
        const hint = close ? ` (did you mean ${close}?)` : '';
        return fail(`'${path}' must be one of ${schema.enum.join(', ')}, not ${JSON.stringify(v)}${hint}`);
      }
      if (schema.maxLength !== undefined && v.length > schema.maxLength) return fail(`'${path}' is longer than ${schema.maxLength} characters`);
      if (schema.pattern && !schema.pattern.re.test(v)) return fail(`'${path}' ${JSON.stringify(v)} must be ${schema.pattern.text}`);
      return;
    }
    case 'boolean':
      if (!isScalar(node) || typeof node.value !== 'boolean') return wrongType();
      return;
    case 'integer': {
      if (!isScalar(node) || typeof node.value !== 'number' || !Number.isInteger(node.value)) return wrongType();
      if (schema.enum && !schema.enum.includes(node.value)) {
        return fail(`'${path}' must be ${schema.enum.length === 1 ? schema.enum[0] : `one of ${schema.enum.join(', ')}`}, not ${node.value}`);
      }
      return;
    }
    case 'int-or-string': {
      const v = isScalar(node) ? node.value : undefined;
      if (typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))) return;
      return wrongType();
    }
  }
}
