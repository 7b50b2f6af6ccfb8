// The resource subscriptions of the gateway's sessions on one upstream MCP server. The server's
// connection is shared, so a URI is subscribed upstream once, when its first session subscribes, and
// unsubscribed when its last one leaves; the server's notifications/resources/updated reach only the
// sessions subscribed to that URI. After a reconnect the URIs still wanted are subscribed again.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** Told the server's own URI of an update. */
export type UpdateListener = (uri: string) => void;

export class ResourceSubscriptions {
  readonly #listeners = new Map<string, Set<UpdateListener>>();

  /** `current`: the server's client now (a reconnect replaces it), null while it is down. */
  constructor(private readonly current: () => Client | null) {}

  /**
   * Adds `listener` for `uri`, subscribing upstream first when no one else listens (a failure
   * rejects and adds nothing). Resolves to the function that removes it again.
   */
  async add(client: Client, uri: string, listener: UpdateListener, timeoutMs: number): Promise<() => void> {
    if (!this.#listeners.has(uri)) await client.subscribeResource({ uri }, { timeout: timeoutMs });
    let listeners = this.#listeners.get(uri);
    if (listeners === undefined) this.#listeners.set(uri, (listeners = new Set()));
    listeners.add(listener);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      listeners.delete(listener);
      if (listeners.size > 0 || this.#listeners.get(uri) !== listeners) return;
      this.#listeners.delete(uri);
      // The upstream may be down meanwhile: it then forgot the subscription anyway.
      void this.current()
        ?.unsubscribeResource({ uri }, { timeout: timeoutMs })
        .catch(() => undefined);
    };
  }

  /** The server said `uri` changed. */
  deliver(uri: string): void {
    for (const listener of this.#listeners.get(uri) ?? []) listener(uri);
  }

  /** After a reconnect: the server's new session knows none of the subscriptions. */
  renew(client: Client, timeoutMs: number): void {
    for (const uri of this.#listeners.keys()) void client.subscribeResource({ uri }, { timeout: timeoutMs }).catch(() => undefined);
  }

  get size(): number {
    return this.#listeners.size;
  }
}
