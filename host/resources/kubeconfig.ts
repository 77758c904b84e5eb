// The kubeconfig document the API server's audit webhook backend reads: written by the control
// plane (control-plane.ts) and printed by `rae webhook-config` (cli/webhook-config.ts).

/** The API server's client certificate and key (PEM), issued by the engine's CA. */
export interface ClientCredentials {
  certPem: string;
  keyPem: string;
}

/**
 * The kubeconfig that points the API server's webhook backend at `server`, trusting `caPem`,
 * authenticating with `client` (client-certificate-data / client-key-data) when given.
 */
export function webhookKubeconfig(server: string, caPem: string, client?: ClientCredentials): Record<string, unknown> {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  const user = client ? { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) } : {};
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'webhook', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: 'webhook', user }],
    contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'webhook' } }],
    'current-context': 'webhook',
  };
}
