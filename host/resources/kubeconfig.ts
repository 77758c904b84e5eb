// The kubeconfig document the API server's audit webhook backend reads: written by the control
// plane (control-plane.ts) and printed by `rae webhook-config` (cli/webhook-config.ts).

/** The kubeconfig that points the API server's webhook backend at `server`, trusting `caPem`. */
export function webhookKubeconfig(server: string, caPem: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'webhook', cluster: { server, 'certificate-authority-data': Buffer.from(caPem, 'utf8').toString('base64') } }],
    users: [{ name: 'webhook', user: {} }],
    contexts: [{ name: 'webhook', context: { cluster: 'webhook', user: 'webhook' } }],
    'current-context': 'webhook',
  };
}
