// Which addresses a remote fetch may reach: public unicast only, IPv4-mapped IPv6 unwrapped first; operators list exceptions.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address may not be reached, or undefined when it may (ipaddr.js ranges: anything but `unicast` is refused). */
export function refusedAddress(address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return `"${address.slice(0, 64)}" is not an IP address`;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' ? undefined : `${parsed.toString()} is a ${range} address, not a public one`;
}

/** `network.allowHosts`: `host` exempts a host from the address check; `host:port` also allows plain http and that port. */
export class AllowList {
  private readonly hosts = new Set<string>();
  private readonly hostPorts = new Set<string>();

  constructor(entries: readonly string[] = []) {
    for (const entry of entries) {
      const port = /^(.*):(\d+)$/.exec(entry);
      if (port) {
        this.hosts.add(port[1].toLowerCase());
        this.hostPorts.add(`${port[1].toLowerCase()}:${port[2]}`);
      } else this.hosts.add(entry.toLowerCase());
    }
  }

  /** The host's addresses are not checked. */
  exempts(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase().replace(/^\[|\]$/g, ''));
  }

  /** Plain http and a port other than 443 are allowed for this host and port. */
  allowsPort(hostname: string, port: string): boolean {
    return this.hostPorts.has(`${hostname.toLowerCase().replace(/^\[|\]$/g, '')}:${port}`);
  }
}

/**
 * Why `url` may not be reached, before any connection, or undefined: https on 443 only (an allowHosts `host:port` entry
 * also allows plain http and that port), no credentials, and a literal IP (any spelling the URL parser accepts) public.
 */
export function urlRefusal(url: URL, allow: AllowList): string | undefined {
  const exemptPort = allow.allowsPort(url.hostname, url.port || (url.protocol === 'https:' ? '443' : '80'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && exemptPort)) return `only https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`;
  if (url.port && url.port !== '443' && !exemptPort) return `only the default port is allowed, not ${url.port}`;
  if (url.username || url.password) return 'URLs with credentials are not fetched';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !allow.exempts(host)) return refusedAddress(host);
  return undefined;
}
