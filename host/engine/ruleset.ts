// What a load produces: the loaded rules, the per-file verdicts and the diagnostics
// (LoadResult), and the options of a load. Plain types, shared by the facade (index.ts), which
// makes them, and the stages that consume a ruleset (matcher, describe, codegen): kept apart
// from the facade so that none of those imports it back (no import circle).
import type { ExpandLimits } from './budget.js';
import type { Collected } from './collector.js';
import type { Diagnostic } from './diagnostics.js';
import type { Expanded } from './expand.js';
import type { Source } from './fields.js';
import type { CheckedExpr } from './ir.js';
import type { Expr } from './ast.js';
import type { OutputToken } from './output-template.js';
import type { Priority } from './priority.js';
import type { RulesBounds } from './rules-bounds.js';
import type { SourceText } from './source-text.js';

/** A rule ready for evaluation. */
export interface LoadedRule {
  /** Position in definition order (Falco evaluates rules of one event type in this order). */
  index: number;
  name: string;
  desc: string;
  priority: Priority;
  source: Source;
  enabled: boolean;
  tags: string[];
  /** The expanded condition (macros resolved), for printing and analysis. */
  expanded: Expr;
  condition: CheckedExpr;
  /** The event types a syscall rule can match (undefined for other sources). */
  evttypes?: Set<string>;
  output: OutputToken[];
}

/** A loaded set of rules. */
export interface Ruleset {
  rules: LoadedRule[];
  /** Counts of what was defined, for summaries. */
  stats: { lists: number; macros: number; rules: number; enabled: number };
  requiredPlugins: Array<{ name: string; version: string }>;
}

/** The per-file verdict, as `falco -V` reports it. */
export interface FileResult {
  name: string;
  successful: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

export interface LoadResult {
  /** True when no file has an error. */
  ok: boolean;
  files: FileResult[];
  diagnostics: Diagnostic[];
  /** The rules that loaded (present even when some failed, so callers can decide). */
  ruleset: Ruleset;
  /** Looks up a file's text by name (for rendering snippets). */
  sources: (name: string) => SourceText | undefined;
  /** The collected definitions and their expansion, for describing them as Falco does. */
  definitions: { collected: Collected; expanded: Expanded };
}

export interface LoadOptions {
  /** Append Falco's suggested output fields to syscall rule outputs (Falco default: true). */
  suggestedOutput?: boolean;
  /** Bounds of the expanded conditions and of the load (defaults DEFAULT_EXPAND_LIMITS, DEFAULT_RULES_BOUNDS; `rae run`: rules.maxExpandedNodes*, rules.max*). */
  limits?: Partial<ExpandLimits & RulesBounds>;
}
