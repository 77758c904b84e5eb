// The server keys of the `forwarder` configuration section (docs/forwarder.md): where
// falcosidekick's HTTP face listens, its bounds and TLS. host/config/ composes them with the
// output keys (host/output/config.ts) under `forwarder`; serverLimits resolves them.
import { readFileSync } from 'node:fs';
import type { ClientLimits } from '../net/connections.js';
import { BODY_LIMIT_BYTES, type ServerLimits } from './server.js';

/** What the forwarder's server reads from the configuration; clients bounded as the webhook's. */
export interface ForwarderServerConfig extends ClientLimits {
  enabled: boolean;
  address: string;
  port: number;
  /** Bodies of POST / past it are refused (413). */
  maxBodyBytes: number;
  /** TLS when both are set. */
  tlsCertFile: string;
  tlsKeyFile: string;
}

/** The defaults: on, 127.0.0.1:2801, plain HTTP. */
export function defaultForwarderServerConfig(): ForwarderServerConfig {
  return {
    enabled: true,
    address: '127.0.0.1',
    port: 2801,
    maxBodyBytes: BODY_LIMIT_BYTES,
    tlsCertFile: '',
    tlsKeyFile: '',
    maxConnectionsPerClient: 64,
    handshakeTimeoutSeconds: 5,
    headersTimeoutSeconds: 10,
    requestTimeoutSeconds: 30,
  };
}

/** The server's bounds from the configuration, with the TLS PEMs read when both files are set (throws, naming the file, when one cannot be read). */
export function serverLimits(fc: ForwarderServerConfig): ServerLimits {
  const { maxBodyBytes, maxConnectionsPerClient, handshakeTimeoutSeconds, headersTimeoutSeconds, requestTimeoutSeconds, tlsCertFile, tlsKeyFile } = fc;
  const limits: ServerLimits = { maxBodyBytes, maxConnectionsPerClient, handshakeTimeoutSeconds, headersTimeoutSeconds, requestTimeoutSeconds };
  if (!tlsCertFile && !tlsKeyFile) return limits;
  if (!tlsCertFile || !tlsKeyFile) throw new Error('forwarder: TLS needs both forwarder.tlsCertFile and forwarder.tlsKeyFile');
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`forwarder: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  return { ...limits, tls: { certPem: read(tlsCertFile), keyPem: read(tlsKeyFile) } };
}
