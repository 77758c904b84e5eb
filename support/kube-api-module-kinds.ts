// The module's kinds as the Kubernetes API test server (kube-api-test-server.ts) serves them, read
// from the CRDs deploy/ installs (deploy/base/crds): group, version, plural, kind, scope, whether
// a status subresource is declared, the printer columns and short names. So the tests and the
// bench talk to a server that serves what a cluster with those CRDs would, no more.
// Consumes deploy/base/crds/*.yaml; produces TestKind[].
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { PrinterColumn, TestKind } from './kube-api-test-server.js';

const CRDS = join(import.meta.dirname, '..', 'deploy', 'base', 'crds');

/** The parts of a CRD read here. */
interface Crd {
  spec: {
    group: string;
    scope: 'Cluster' | 'Namespaced';
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: Array<{ name: string; storage: boolean; subresources?: { status?: object }; additionalPrinterColumns?: PrinterColumn[] }>;
  };
}

/** Every kind of deploy/base/crds (its storage version), in file-name order. */
export function moduleTestKinds(): TestKind[] {
  return readdirSync(CRDS)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const { spec } = parse(readFileSync(join(CRDS, f), 'utf8')) as Crd;
      const v = spec.versions.find((x) => x.storage)!;
      return {
        group: spec.group,
        version: v.name,
        plural: spec.names.plural,
        kind: spec.names.kind,
        namespaced: spec.scope === 'Namespaced',
        status: v.subresources?.status !== undefined,
        printerColumns: v.additionalPrinterColumns,
        shortNames: spec.names.shortNames,
      };
    });
}
