// A TCP proxy on 127.0.0.1 (a random port) in front of a server, that can imitate a silent network
// partition without namespaces: while "blackholed" it forwards nothing either way and closes nothing
// (as a firewall dropping packets: both ends wait), and new connections are accepted but not
// connected on (a client sees no answer to its startup). Healing resumes every connection, the
// bytes held meanwhile delivered late, as TCP's retransmissions would deliver them.
import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface BlackholeProxy {
  /** host:port to use instead of the server's. */
  address: string;
  port: number;
  blackhole(): void;
  heal(): void;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  server: Socket | null;
}

export async function startBlackholeProxy(target: { host: string; port: number }): Promise<BlackholeProxy> {
  let blackholed = false;
  const links = new Set<Link>();

  const join = (link: Link) => {
    const server = connect(target.port, target.host);
    link.server = server;
    const { client } = link;
    // Written only while not blackholed: otherwise each side holds its data (paused streams keep it
    // in the kernel's buffers, then their own), like packets waiting to be retransmitted.
    client.on("data", (chunk: Buffer) => server.write(chunk));
    server.on("data", (chunk: Buffer) => client.write(chunk));
    const drop = () => {
      client.destroy();
      server.destroy();
      links.delete(link);
    };
    client.on("close", drop);
    server.on("close", drop);
    client.on("error", drop);
    server.on("error", drop);
    if (blackholed) {
      client.pause();
      server.pause();
    } else {
      client.resume();
    }
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    const link: Link = { client, server: null };
    links.add(link);
    client.on("error", () => undefined);
    client.on("close", () => links.delete(link));
    if (!blackholed) join(link);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    blackhole() {
      blackholed = true;
      for (const link of links) {
        link.client.pause();
        link.server?.pause();
      }
    },
    heal() {
      blackholed = false;
      for (const link of [...links]) {
        if (link.client.destroyed) continue;
        if (link.server === null) join(link);
        else {
          link.client.resume();
          link.server.resume();
        }
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) {
          link.client.destroy();
          link.server?.destroy();
        }
        links.clear();
        server.close(() => resolve());
      }),
  };
}
