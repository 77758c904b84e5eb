// Expansion budget: how large and how deep an expanded condition is, and where it first passes a
// limit. expand.ts embeds a resolved macro body by reference, so an expanded condition is a DAG
// in memory; the checker and the event-type analysis visit each shared body once, but the
// printer, the interpreter and codegen walk it as a tree: a macro used twice by each of 24
// macros is 2^24 subtrees to them. The meter counts the tree those stages walk while visiting
// each shared body once, so measuring costs the DAG's size. Consumes expanded Exprs; produces
// sizes and the first excess.
import type { Expr } from './ast.js';

/** Bounds of an expanded condition (docs/resources.md "Bounds"). */
export interface ExpandLimits {
  /** Most nodes one expanded condition may have; a list value counts as a node. */
  maxNodes: number;
  /** Most nodes the expanded conditions of all rules of one load may have together. */
  maxTotalNodes: number;
  /** Deepest nesting of one condition as written (rules.maxConditionDepth; default the parser's DEFAULT_MAX_DEPTH). */
  maxConditionDepth?: number;
}

/** Safe defaults: the largest upstream rule ("Write below etc") is 880 nodes, all upstream sets together 6,843. */
export const DEFAULT_EXPAND_LIMITS: ExpandLimits = { maxNodes: 50_000, maxTotalNodes: 200_000 };

/**
 * The deepest an expanded tree may nest (and/or/not/macro levels plus the leaf). The later stages
 * recurse over it; 1,000 is Falco's depth limit for one condition and a third of what the
 * checker survived on the main thread's stack (a chain of 1,500 macros).
 */
export const MAX_EXPANDED_DEPTH = 1000;

/** The size of an expanded tree: its nodes (list values included) and its depth. */
export interface TreeSize {
  nodes: number;
  depth: number;
}

/** Where a condition's own text first passes a limit. */
export interface Excess {
  limit: 'nodes' | 'depth';
  /** Offset in the condition's own text (a macro reference or a node of the text itself). */
  offset: number;
  /** The macro referenced at `offset`, when the excess comes from its expansion. */
  macro?: { name: string; size: TreeSize };
}

/** The nodes a node counts for by itself: 1, plus the values of a list on its right. */
function ownWeight(e: Expr): number {
  return e.kind === 'binary' && e.right.kind === 'list' ? 1 + e.right.values.length : 1;
}

/** The children of a node in walk order (a macro's body is not its own: it is measured apart). */
function ownChildren(e: Expr): readonly Expr[] {
  return e.kind === 'and' || e.kind === 'or' ? e.children : e.kind === 'not' ? [e.child] : [];
}

/** Measures expanded trees, remembering each macro body it has seen (bodies are shared objects). */
export class ExpansionMeter {
  private readonly bodies = new Map<Expr, TreeSize>();

  /** The size of the tree a walk of `root` visits, macro bodies included. */
  size(root: Expr): TreeSize {
    const known = this.bodies.get(root);
    if (known) return known;
    let nodes = 0;
    let depth = 0;
    this.visit(root, (e, level) => {
      if (e.kind === 'macro') {
        const body = this.size(e.body);
        nodes += 1 + body.nodes;
        depth = Math.max(depth, level + 1 + body.depth);
      } else {
        nodes += ownWeight(e);
        depth = Math.max(depth, level + 1);
      }
      return false;
    });
    const size = { nodes, depth };
    this.bodies.set(root, size);
    return size;
  }

  /**
   * The first node of `root`'s own text, in walk order, at which the expanded tree passes
   * `maxNodes` nodes or `maxDepth` levels; undefined when it stays within both.
   */
  excess(root: Expr, maxNodes: number, maxDepth = MAX_EXPANDED_DEPTH): Excess | undefined {
    let nodes = 0;
    let found: Excess | undefined;
    this.visit(root, (e, level) => {
      if (e.kind === 'macro') {
        const size = this.size(e.body);
        nodes += 1 + size.nodes;
        if (nodes > maxNodes) found = { limit: 'nodes', offset: e.span.start, macro: { name: e.name, size } };
        else if (level + 1 + size.depth > maxDepth) found = { limit: 'depth', offset: e.span.start, macro: { name: e.name, size } };
      } else {
        nodes += ownWeight(e);
        if (nodes > maxNodes) found = { limit: 'nodes', offset: e.span.start };
        else if (level + 1 > maxDepth) found = { limit: 'depth', offset: e.span.start };
      }
      return found !== undefined;
    });
    return found;
  }

  /** Pre-order over `root`'s own nodes (not into macro bodies) with their level; `stop` ends the walk. */
  private visit(root: Expr, stop: (e: Expr, level: number) => boolean): void {
    // Iterative: a condition's own tree may be as deep as the parser allows.
    const stack: Array<[Expr, number]> = [[root, 0]];
    while (stack.length > 0) {
      const [e, level] = stack.pop()!;
      if (stop(e, level)) return;
      const kids = ownChildren(e);
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i]!, level + 1]);
    }
  }
}
