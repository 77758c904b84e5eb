// The JSON shapes the console's server routes (routes.ts) answer and its pages (web/) read: one
// definition for both sides. Imports nothing, so the pages' build takes it without the server.

/** One loaded rule as the Rules page shows it. */
export interface ConsoleRule {
  name: string;
  source: string;
  priority: string;
  tags: string[];
  enabled: boolean;
  /** Events it judged and alerts it raised since the engine started (its rule figures); 0 when not counted. */
  evaluations: number;
  matches: number;
}
