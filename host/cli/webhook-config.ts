// `rae webhook-config`: prints the API server's audit webhook configuration (the kubeconfig
// file given to --audit-webhook-config-file) for this engine: one cluster, user and context, all
// named `webhook`, whose server is the webhook URL and whose certificate-authority-data is the
// base64 ca.crt; the user authenticates with the client certificate the engine's CA issued
// (client-certificate-data, client-key-data: webhook.clientCertFile/clientKeyFile, else the
// engine's client.crt, client.key). Creates the TLS material first if `rae run` has not yet (the same files).
import { stringify as toYaml } from 'yaml';
import { loadConfig } from '../config/config.js';
import { clientCredentials, ensureWebhookTls, webhookUrl } from '../sources/audit/index.js';
import { webhookKubeconfig } from '../resources/kubeconfig.js';
import { parseCommandArgs, type Command } from './command.js';

const HELP = `Usage: rae webhook-config [--config FILE] [--state-dir DIR]

Prints the orchestrator API server's audit webhook configuration (kubeconfig format) on stdout:
save it and start the API server with
  --audit-webhook-config-file=<that file> --audit-policy-file=<a policy>
The server URL comes from webhook.address, webhook.port and webhook.path; the CA is the ca.crt
of the webhook's TLS material (webhook.tlsCaFile, or generated into <state-dir>/webhook-tls,
created now if missing); the user's client certificate and key are webhook.clientCertFile and
webhook.clientKeyFile when a client CA is configured (webhook.clientCaFile, as deploy/ does),
else client.crt and client.key there, issued by the engine's CA, which the webhook verifies.
The output holds a private key: keep the file readable by the API server only (mode 0600).
See docs/webhook.md.

Options:
  -c, --config FILE     YAML configuration (the same file as rae run)
      --state-dir DIR   state directory (as rae run)
  -h, --help            show this help

Exit status: 0 printed, 1 bad configuration or TLS material, 2 bad usage.`;

export const webhookConfigCommand: Command = {
  name: 'webhook-config',
  help: HELP,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { config: { type: 'string', short: 'c' }, 'state-dir': { type: 'string' } });
    const { config, problems } = loadConfig(values.config, values['state-dir']);
    if (problems.length > 0) {
      for (const p of problems) process.stderr.write(`webhook-config: config ${p.key}: ${p.message}\n`);
      return 1;
    }
    const material = ensureWebhookTls({ stateDir: config.stateDir, webhook: config.webhook });
    if (!material.ok) {
      process.stderr.write(`webhook-config: ${material.error}\n`);
      return 1;
    }
    const w = config.webhook;
    const client = clientCredentials(material.tls);
    // A configured client CA without the pair it issued: this host does not hold what the API server must present.
    if (!client && w.requireClientCert) {
      process.stderr.write(
        `webhook-config: webhook.clientCaFile ${w.clientCaFile} is set without webhook.clientCertFile and webhook.clientKeyFile: give the API server's client certificate and key that CA issued (deploy/configure.sh writes them to site/tls/client.crt and client.key)\n`,
      );
      return 1;
    }
    process.stdout.write(toYaml(webhookKubeconfig(webhookUrl(w.address, w.port, w.path), material.tls.caPem, client)));
    return 0;
  },
};
