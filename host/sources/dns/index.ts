// Endpoint domain names (fd.sip.name, fd.cip.name, fd.lip.name, fd.rip.name): the rules' names
// (names.ts), their resolution off the event path (resolver.ts) and the table in the module's
// state region the translators read (table.ts).
import type { DnsTable } from './table.js';
import { DnsResolver, type DnsConfig } from './resolver.js';

export { domainNames } from './names.js';
export { DnsTable, lookupName } from './table.js';
export { DnsResolver, type DnsConfig } from './resolver.js';

/**
 * rae run's resolver: keeps the names of the bound module's rules resolved into the DNS table
 * (from the first bind on, and on every later one) and logs each changed answer at debug level.
 */
export function followDomainNames(cfg: DnsConfig, table: DnsTable, log: (line: string, level?: 'debug') => void): { name: string; stop: () => Promise<void> } {
  const resolver = new DnsResolver(table, cfg, undefined, (name, addresses) => log(`run: dns: ${name} -> ${addresses.join(', ') || 'no address'}`, 'debug'));
  return { name: 'dns resolver', stop: async () => resolver.stop() };
}
