// Test helpers around Debian's prometheus package: locating its binaries (a missing binary makes
// the tests that need it skip loudly, or fail under CI=true), and turning a shipped
// *MetricsRulesGroup manifest into a Prometheus rule file (its `spec` is one rule group without
// the `name`, which is the resource's name).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** Where the project keeps the manifests. */
export const MANIFESTS = join(import.meta.dirname, '..', '..', 'rules', 'manifests');

/** The path of a Prometheus tool, or undefined (after printing why) if it is not installed. */
export function findTool(name: 'prometheus' | 'promtool'): string | undefined {
  const path = `/usr/bin/${name}`;
  if (existsSync(path)) return path;
  process.stderr.write(`\n*** SKIPPED: ${path} is missing; install Debian's prometheus package (npm run setup as root, or apt-get install prometheus) ***\n`);
  return undefined;
}

/** A parsed manifest of rules/manifests/. */
export function readManifest(file: string): { kind: string; metadata: { name: string }; spec: Record<string, unknown> } {
  return parseYaml(readFileSync(join(MANIFESTS, file), 'utf8'));
}

/** The Prometheus rule file (YAML text) holding the rule group of a *MetricsRulesGroup manifest. */
export function ruleFileFromManifest(file: string): string {
  const m = readManifest(file);
  if (!/MetricsRulesGroup$/.test(m.kind)) throw new Error(`${file}: not a MetricsRulesGroup (${m.kind})`);
  return stringifyYaml({ groups: [{ name: m.metadata.name, ...m.spec }] });
}
