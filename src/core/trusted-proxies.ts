// Which peers may speak for the client in X-Forwarded-For, -Host and -Proto: the config's
// `server.trusted_proxies`, IPv4 and IPv6 addresses and CIDR ranges (none by default). The server
// hands isTrusted to Fastify's trustProxy, so request.ip, request.host and request.protocol honour
// forwarded headers only from such a peer; from anyone else they are ignored. Anything that needs
// the client's address (sign-in throttling, network policies) reads request.ip.
import { BlockList, isIP } from "node:net";

export interface ProxyRange {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/** One entry ("10.0.0.5", "10.0.0.0/8", "::1", "fd00::/8"), or why it is not one. */
export function parseProxyRange(entry: string): ProxyRange | { error: string } {
  const text = entry.trim();
  const slash = text.indexOf("/");
  const address = slash === -1 ? text : text.slice(0, slash);
  const version = isIP(address);
  // A zone id (fe80::1%eth0) names an interface, which a socket's peer address never carries.
  if (version === 0 || address.includes("%")) {
    return { error: `"${entry}" is not an IPv4 or IPv6 address or CIDR range (for example 10.0.0.5, 10.0.0.0/8, ::1 or fd00::/8)` };
  }
  const max = version === 4 ? 32 : 128;
  const prefix = slash === -1 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    return { error: `"${entry}": the prefix length after "/" must be a whole number from 0 to ${max}` };
  }
  return { address, prefix: Number(prefix), family: version === 4 ? "ipv4" : "ipv6" };
}

export class TrustedProxies {
  readonly #list = new BlockList();
  readonly size: number;

  constructor(ranges: readonly ProxyRange[]) {
    for (const range of ranges) this.#list.addSubnet(range.address, range.prefix, range.family);
    this.size = ranges.length;
  }

  /** True for a peer address inside a trusted range (an IPv4-mapped IPv6 address matches IPv4 ranges). */
  isTrusted(address: string | undefined): boolean {
    const version = address ? isIP(address) : 0;
    return version !== 0 && this.#list.check(address!, version === 4 ? "ipv4" : "ipv6");
  }

  /** Fastify's `trustProxy`: false when none is configured, so forwarded headers count for nothing. */
  fastifyTrustProxy(): false | ((address: string) => boolean) {
    return this.size === 0 ? false : (address) => this.isTrusted(address);
  }
}
