// The CRDs of deploy/base/crds as validators, without a cluster: each version's openAPIV3Schema
// compiled by ajv as the API server applies it under kubectl's default --validate=strict (an
// unknown field is an error; metadata beyond what the schema restricts is the API server's own),
// with x-kubernetes-int-or-string read as "integer or string". Also a check that a schema is
// structural (every node typed, junctors holding value validations only), which the API server
// requires of apiextensions.k8s.io/v1 schemas.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy');

/** The parts of a CustomResourceDefinition the tests read. */
export interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { group: string; scope: string; names: { kind: string; plural: string }; versions: Array<{ name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: JsonSchema } }> };
}

export type JsonSchema = { [key: string]: unknown };

/** Every CRD of deploy/base/crds by kind. */
export function loadCrds(): Map<string, Crd> {
  const dir = join(DEPLOY, 'base', 'crds');
  const out = new Map<string, Crd>();
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.yaml'))
    .sort()) {
    const crd = parseYaml(readFileSync(join(dir, f), 'utf8')) as Crd;
    out.set(crd.spec.names.kind, crd);
  }
  return out;
}

/** The schema as the API server enforces it with strict field validation. */
function strict(schema: JsonSchema, path: string): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k.startsWith('x-kubernetes-')) continue;
    if (k === 'properties') {
      out.properties = Object.fromEntries(Object.entries(v as Record<string, JsonSchema>).map(([name, s]) => [name, strict(s, `${path}.${name}`)]));
    } else if (k === 'items') out.items = strict(v as JsonSchema, `${path}[]`);
    else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') out[k] = (v as JsonSchema[]).map((s) => strict(s, path));
    else out[k] = v;
  }
  // Fields the server fills or owns: apiVersion, kind, and metadata beyond name.
  if (schema.type === 'object' && schema.properties && path !== '.metadata' && !schema['x-kubernetes-preserve-unknown-fields']) out.additionalProperties = false;
  return out;
}

/** A validator per kind (the storage version): returns the errors, [] when valid. */
export function crdValidators(crds: Map<string, Crd>): Map<string, (doc: unknown) => ErrorObject[]> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const out = new Map<string, (doc: unknown) => ErrorObject[]>();
  for (const [kind, crd] of crds) {
    const version = crd.spec.versions.find((v) => v.storage)!;
    const validate: ValidateFunction = ajv.compile(strict(version.schema.openAPIV3Schema, ''));
    out.set(kind, (doc) => (validate(doc) ? [] : [...(validate.errors ?? [])]));
  }
  return out;
}

/** Problems that make a schema non-structural (apiextensions.k8s.io/v1 refuses such a CRD). */
export function structuralProblems(schema: JsonSchema, path = '', inJunctor = false): string[] {
  const problems: string[] = [];
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (inJunctor) {
    for (const k of ['type', 'properties', 'items', 'additionalProperties', 'description', 'default', 'nullable']) {
      if (k in schema && !(k === 'type' && path.endsWith('|int-or-string'))) problems.push(`${path}: '${k}' inside anyOf/oneOf/allOf`);
    }
  } else if (!intOrString && !schema['x-kubernetes-preserve-unknown-fields'] && typeof schema.type !== 'string') problems.push(`${path || '(root)'}: no type`);
  if (schema.properties && schema.additionalProperties !== undefined) problems.push(`${path}: properties and additionalProperties together`);
  for (const [name, s] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) problems.push(...structuralProblems(s, `${path}.${name}`));
  if (schema.items) problems.push(...structuralProblems(schema.items as JsonSchema, `${path}[]`));
  for (const j of ['anyOf', 'oneOf', 'allOf'] as const) {
    // x-kubernetes-int-or-string allows exactly anyOf: [{type: integer}, {type: string}].
    for (const s of (schema[j] ?? []) as JsonSchema[]) problems.push(...structuralProblems(s, intOrString && j === 'anyOf' ? `${path}|int-or-string` : path, true));
  }
  return problems;
}
