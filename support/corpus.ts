// The upstream files that tests and benches read, all inside this repository (nothing reads a
// sibling folder): the Falco rule files are the built-in sets under rules/ (unmodified upstream
// copies; rules/README.md gives repository, path and commit), the Kubernetes audit samples are
// test/fixtures/k8saudit-samples/ (unmodified copies; test/fixtures/SOURCES.md).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url);

/** Where each upstream rule file lives in the repository, by its upstream file name. */
const RULE_FILES: Record<string, string> = {
  'falco_rules.yaml': 'rules/syscall/falco_rules.yaml',
  'falco-incubating_rules.yaml': 'rules/syscall-incubating/falco-incubating_rules.yaml',
  'falco-sandbox_rules.yaml': 'rules/syscall-sandbox/falco-sandbox_rules.yaml',
  'k8s_audit_rules.yaml': 'rules/orchestrator-audit/k8s_audit_rules.yaml',
};

/** The upstream rule file names, in load order (stable, incubating, sandbox, k8s audit). */
export const CORPUS_RULE_FILES = Object.keys(RULE_FILES);

/** Absolute path of an upstream rule file, by its upstream name (`falco_rules.yaml`). */
export function corpusPath(name: string): string {
  const rel = RULE_FILES[name];
  if (!rel) throw new Error(`no upstream rule file named ${name}`);
  return fileURLToPath(new URL(rel, ROOT));
}

/** The text of an upstream rule file, by its upstream name. */
export function corpusText(name: string): string {
  return readFileSync(corpusPath(name), 'utf8');
}

/** The Kubernetes audit samples folder (one JSON-lines file per case), as a URL and as a path. */
export const K8SAUDIT_SAMPLES_URL = new URL('test/fixtures/k8saudit-samples/', ROOT);
export const K8SAUDIT_SAMPLES = fileURLToPath(K8SAUDIT_SAMPLES_URL);
