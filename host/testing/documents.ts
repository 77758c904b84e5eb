// Test files as `rae test` reads them: YAML text to plain documents (maps, lists, scalars) that
// remember where each of their maps and lists, and each key's value, stood in the file, so that a
// runner given only the plain document (outcome.ts) can still name file:line:col in an error.
// Consumes a file name and its text; produces the documents, or throws a TestFileError.
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';

/** An error in a test file, its message starting with file:line:col. */
export class TestFileError extends Error {}

/** Where a value stands: 1-based line and column. */
interface Place {
  line: number;
  col: number;
}

/** Each parsed map or list: its own place, and the place of each key's (index's) value. */
const PLACES = new WeakMap<object, { self: Place; members: Map<string | number, Place> }>();

/**
 * `file:line:col` of `value` (a map or list of a document from readTestDocuments), or of its
 * member `key` when given; just `file` for a value that was not read here.
 */
export function locate(file: string, value: unknown, key?: string | number): string {
  const places = typeof value === 'object' && value !== null ? PLACES.get(value) : undefined;
  const place = places && (key === undefined ? places.self : (places.members.get(key) ?? places.self));
  return place ? `${file}:${place.line}:${place.col}` : file;
}

/** A located error: `file:line:col: message`. */
export function testFileError(file: string, value: unknown, key: string | number | undefined, message: string): TestFileError {
  return new TestFileError(`${locate(file, value, key)}: ${message}`);
}

/**
 * The documents of a YAML text (empty documents left out). A syntax error throws, located. A plain
 * scalar starting with `%` (upstream suites' unquoted `runIf: %{ item.runIf }`, which Go's yaml.v3
 * reads as a string) is read as that string, as upstream's runner reads it.
 */
export function readTestDocuments(file: string, text: string): unknown[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true, lineCounter: lines });
  const out: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const error = doc.errors.find((e) => !(e.code === 'BAD_SCALAR_START' && text[e.pos[0]] === '%'));
    if (error) {
      const p = lines.linePos(error.pos[0]);
      throw new TestFileError(`${file}:${p.line}:${p.col}: invalid YAML: ${error.message.split('\n')[0]}`);
    }
    if (doc.contents === null) continue;
    const at = (n: Node): Place => lines.linePos(n.range?.[0] ?? 0);
    out.push(plain(doc, doc.contents, at));
  }
  return out;
}

/** The plain value of a node, recording the places of maps and lists. */
function plain(doc: Document, node: Node | null, at: (n: Node) => Place): unknown {
  if (node === null) return null;
  if (isAlias(node)) return plain(doc, node.resolve(doc) ?? null, at);
  if (isScalar(node)) return node.value;
  if (isSeq(node)) {
    const members = new Map<string | number, Place>();
    const list = node.items.map((item, i) => {
      if (item !== null && typeof item === 'object') members.set(i, at(item as Node));
      return plain(doc, item as Node, at);
    });
    PLACES.set(list, { self: at(node), members });
    return list;
  }
  if (isMap(node)) {
    const members = new Map<string | number, Place>();
    const map: Record<string, unknown> = {};
    for (const pair of node.items) {
      const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
      const value = pair.value as Node | null;
      members.set(key, at(value ?? (pair.key as Node)));
      map[key] = plain(doc, value, at);
    }
    PLACES.set(map, { self: at(node), members });
    return map;
  }
  return node;
}
