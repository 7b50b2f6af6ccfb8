// Network namespaces on one bridge: the root namespace holds the bridge (x.x.x.1: HAProxy's side, the
// mock upstream and the test), each host gets a namespace, a veth pair into the bridge and its own
// address. A host is "cut off" from another address by an nftables rule inside its namespace that
// drops every packet to and from it: a silent partition (no reset, no ICMP), the hard case for
// timeouts. Names and the subnet carry the test process's id, so that two runs never collide.
import { execFile } from "node:child_process";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command (no shell), bounded; never rejects: the caller decides what a failure means. */
export function run(command: string, args: string[], timeoutMs = 20_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout, stderr: error && code === -1 ? `${stderr}\n${error.message}` : stderr });
    });
  });
}

export async function must(command: string, args: string[], timeoutMs = 20_000): Promise<string> {
  const result = await run(command, args, timeoutMs);
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
  return result.stdout;
}

export interface Host {
  name: string;
  /** The namespace's name, for `ip netns exec`. */
  namespace: string;
  address: string;
}

export interface Network {
  /** The bridge's address in the root namespace (HAProxy, the mock upstream and the test reach the hosts from it). */
  gatewayAddress: string;
  hosts: Map<string, Host>;
  host(name: string): Host;
  /** Drops every packet between `from` and the address `to` (inside from's namespace) until heal. */
  cut(from: string, to: string): Promise<void>;
  heal(from: string): Promise<void>;
  /** Removes the namespaces (their processes must be gone first) and the bridge; never throws. */
  destroy(): Promise<void>;
}

/** The hosts get .10, .11, … in the order given. */
export async function createNetwork(hostNames: readonly string[]): Promise<Network> {
  const tag = (process.pid % 10_000).toString(36);
  const subnet = `10.77.${(process.pid % 200) + 20}`;
  const bridge = `mgwbr${tag}`;
  const hosts = new Map<string, Host>();
  const network: Network = {
    gatewayAddress: `${subnet}.1`,
    hosts,
    host(name) {
      const host = hosts.get(name);
      if (!host) throw new Error(`no host ${name}`);
      return host;
    },
    async cut(from, to) {
      const ns = network.host(from).namespace;
      const rules = [
        `add table inet partition`,
        `add chain inet partition out { type filter hook output priority 0 ; }`,
        `add chain inet partition in { type filter hook input priority 0 ; }`,
        `add rule inet partition out ip daddr ${to} drop`,
        `add rule inet partition in ip saddr ${to} drop`,
      ];
      for (const rule of rules) await must("ip", ["netns", "exec", ns, "nft", ...rule.split(" ")]);
    },
    async heal(from) {
      await must("ip", ["netns", "exec", network.host(from).namespace, "nft", "delete", "table", "inet", "partition"]);
    },
    async destroy() {
      for (const host of hosts.values()) await run("ip", ["netns", "delete", host.namespace]);
      await run("ip", ["link", "delete", bridge]);
    },
  };
  try {
    await must("ip", ["link", "add", bridge, "type", "bridge"]);
    await must("ip", ["addr", "add", `${network.gatewayAddress}/24`, "dev", bridge]);
    await must("ip", ["link", "set", bridge, "up"]);
    let index = 10;
    for (const name of hostNames) {
      const host: Host = { name, namespace: `mgw${tag}-${name}`, address: `${subnet}.${index}` };
      const outside = `mgv${tag}${index}`;
      await must("ip", ["netns", "add", host.namespace]);
      hosts.set(name, host);
      await must("ip", ["link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", host.namespace]);
      await must("ip", ["link", "set", outside, "master", bridge]);
      await must("ip", ["link", "set", outside, "up"]);
      const inside = (...args: string[]) => must("ip", ["netns", "exec", host.namespace, "ip", ...args]);
      await inside("addr", "add", `${host.address}/24`, "dev", "eth0");
      await inside("link", "set", "eth0", "up");
      await inside("link", "set", "lo", "up");
      index += 1;
    }
  } catch (error) {
    await network.destroy();
    throw error;
  }
  return network;
}
