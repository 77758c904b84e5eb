// The nesting bound of decoded audit events. JSON.parse takes any depth, but a value nested
// thousands deep overflows the stack of every recursive consumer after it (JSON.stringify in
// ka.*/jevt.* text values and alert outputs), which failed the whole batch holding it. Past the
// bound, an object or array is cut from its parent where it was decoded, before any engine
// sees the event: an object member is deleted and an array element becomes undefined, so a
// field path into the cut part reads as missing (and JSON text of its parent shows the member
// gone, or null for an element) on the interpreter and the compiled evaluator alike. The walk
// is iterative. Consumes a parsed JSON value; mutates it in place and returns how many values
// were cut.

/**
 * The default bound: valyala/fastjson's MaxDepth, the parser of Falco's k8saudit plugin, which
 * refuses a document nested deeper (fastjson parser.go `MaxDepth = 300`).
 */
export const DEFAULT_MAX_EVENT_DEPTH = 300;

/**
 * Cuts every object or array nested deeper than `maxDepth` (the event object itself is depth 1)
 * from its parent; returns the number of values cut (0: the event is within the bound).
 */
export function cutDeepValues(root: unknown, maxDepth: number): number {
  if (typeof root !== 'object' || root === null) return 0;
  let cut = 0;
  // Containers and their depths in two parallel stacks (no tuple per container).
  const containers: object[] = [root];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    const deeper = depth >= maxDepth;
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const v: unknown = container[i];
        if (typeof v !== 'object' || v === null) continue;
        if (deeper) {
          container[i] = undefined;
          cut++;
        } else {
          containers.push(v);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    const members = container as Record<string, unknown>;
    // JSON.parse objects have own enumerable members only: for..in walks them without a key array.
    for (const key in members) {
      const v = members[key];
      if (typeof v !== 'object' || v === null) continue;
      if (deeper) {
        delete members[key];
        cut++;
      } else {
        containers.push(v);
        depths.push(depth + 1);
      }
    }
  }
  return cut;
}
