// Manifests the resources tests write into a real `rae run`'s watched directory: the
// ModuleConfig that enables the module and a canary EngineAuditRules whose rule fires on a read of
// the `rae-canary` ConfigMap (an audit event the tests post to the webhook).
const H = 'apiVersion: deckhouse.io/v1alpha1\n';

/** The ModuleConfig `runtime-audit-engine`, enabled or not. */
export function moduleConfig(enabled = true): string {
  return `${H}kind: ModuleConfig\nmetadata:\n  name: runtime-audit-engine\nspec:\n  enabled: ${enabled}\n  version: 1\n`;
}

/** The canary EngineAuditRules (resource `canary`), its rule named `rule`. */
export function canaryRules(rule = 'Canary ConfigMap read'): string {
  return `${H}kind: EngineAuditRules
metadata:
  name: canary
spec:
  rules:
    - rule:
        name: ${rule}
        desc: Someone read the canary ConfigMap.
        condition: kevt and ka.verb = get and ka.target.resource = configmaps and ka.target.name = rae-canary
        output: Canary ConfigMap read (user=%ka.user.name ns=%ka.target.namespace)
        priority: Critical
        source: K8sAudit
`;
}
