// The `api` configuration section (docs/api.md): where the error-tracking API listens, how it
// names itself in DSNs and links, its TLS, bootstrap file and HTTP limits. host/config/ composes
// it; apiLimitsOf (limits.ts) and startApi (index.ts) check it.

/**
 * DSNs and pagination links use externalScheme://externalHost ('' = localhost:<port>, the port
 * left out when it is the scheme's default); TLS when both tls files are set; bootstrapFile is
 * YAML applied at start. The limits (docs/security-api.md): body sizes, URL and header bytes,
 * connections per client address, header and request timeouts.
 */
export interface ApiConfig {
  enabled: boolean;
  address: string;
  port: number;
  externalHost: string;
  externalScheme: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  bootstrapFile: string;
  maxBodyBytes: number;
  maxEventBytes: number;
  maxUrlBytes: number;
  maxHeaderBytes: number;
  maxConnectionsPerClient: number;
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
}

/** The defaults: on, 127.0.0.1:8080, plain HTTP behind an https external name. */
export function defaultApiConfig(): ApiConfig {
  return {
    enabled: true,
    address: '127.0.0.1',
    port: 8080,
    externalHost: '',
    externalScheme: 'https',
    tlsCertFile: '',
    tlsKeyFile: '',
    bootstrapFile: '',
    maxBodyBytes: 1024 * 1024,
    maxEventBytes: 200 * 1024,
    maxUrlBytes: 8192,
    maxHeaderBytes: 16 * 1024,
    maxConnectionsPerClient: 64,
    headersTimeoutSeconds: 20,
    requestTimeoutSeconds: 60,
  };
}
