// `module.controlPlaneManager`: when the control plane is managed for us (Deckhouse's
// control-plane-manager module), the API server's audit webhook is configured automatically.
// Here that means: while the audit source runs, its API server configuration (the kubeconfig of
// `rae webhook-config`) is kept at a well-known path for the control plane to pass as
// --audit-webhook-config-file; it is removed when the source stops (module disabled or engine
// stopped), so the API server is never pointed at a webhook that is not listening.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { webhookKubeconfig, type ClientCredentials } from './kubeconfig.js';

/** A published configuration file. */
export interface PublishedConfig {
  path: string;
  remove(): void;
}

/** Writes the API server's audit webhook configuration for `url` trusting `caPem`, with its client certificate and key when given (mode 0600, replaced atomically). */
export function publishAuditWebhookConfig(path: string, url: string, caPem: string, client: ClientCredentials | undefined, log: (m: string) => void): PublishedConfig {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, stringify(webhookKubeconfig(url, caPem, client)), { mode: 0o600 });
  renameSync(tmp, path); // readers never see a half-written file
  log(`module: control-plane-manager: audit webhook configuration for ${url} written to ${path}`);
  return {
    path,
    remove() {
      rmSync(path, { force: true });
      log(`module: control-plane-manager: audit webhook configuration ${path} removed`);
    },
  };
}
