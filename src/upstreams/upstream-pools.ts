// Upstream connection pools, one undici Agent per provider (docs/decisions/0043-upstream-connection-pools.md):
// HTTP/2 where the upstream offers it over TLS (ALPN), many streams on one connection; HTTP/1.1 pools
// sized by the provider's `max_connections`; and no silent wait. A request waiting for a connection
// is counted (the `gateway_upstream_requests_waiting` gauge, by provider) and waits at most the
// provider's `connection_wait_ms`, then fails with ConnectionWaitTimeoutError (the pipeline answers
// the catalogue's provider_error). Settings come with each request's provider, so a catalog reload
// that changes them takes effect on the next request; requests of the older snapshot keep its pool.
import type * as Undici from "undici";
import type { ProviderConfig } from "../core/catalog.js";
import { ConnectionWaitTimeoutError } from "./upstream-errors.js";

/** A provider's pool settings (config: providers.NAME.max_connections, connection_wait_ms, http2, connect_timeout_ms). */
export interface PoolSettings {
  maxConnections: number;
  connectionWaitMs: number;
  http2: boolean;
  connectTimeoutMs: number;
}

type Handler = Undici.Dispatcher.DispatchHandler;
type Controller = Undici.Dispatcher.DispatchController;

/** Requests waiting for a connection now, by provider name (the gauge reads it when scraped). */
const waitingByProvider = new Map<string, number>();

function addWaiting(provider: string, delta: number): void {
  waitingByProvider.set(provider, (waitingByProvider.get(provider) ?? 0) + delta);
}

/** Requests of this process waiting for an upstream connection now, by provider (providers seen so far, zeros included). */
export function upstreamRequestsWaiting(): ReadonlyMap<string, number> {
  return waitingByProvider;
}

/**
 * Counts a request as waiting from its dispatch until undici starts it on a connection (a socket
 * of its own on HTTP/1.1, a stream on HTTP/2), and fails it once it has waited `waitMs`. A request
 * that timed out and is started later is aborted there (undici still holds it in its queue).
 */
function boundedWait(provider: string, waitMs: number) {
  return (dispatch: Undici.Dispatcher["dispatch"]): Undici.Dispatcher["dispatch"] =>
    (options, handler: Handler) => {
      let state: "waiting" | "started" | "timed_out" = "waiting";
      addWaiting(provider, 1);
      const stopWaiting = () => {
        if (state !== "waiting") return false;
        clearTimeout(timer);
        addWaiting(provider, -1);
        state = "started";
        return true;
      };
      const timer = setTimeout(() => {
        if (state !== "waiting") return;
        addWaiting(provider, -1);
        state = "timed_out";
        handler.onResponseError?.(null as unknown as Controller, new ConnectionWaitTimeoutError(waitMs));
      }, waitMs);
      timer.unref();
      const live = () => state !== "timed_out";
      return dispatch(options, {
        onRequestStart(controller, context) {
          if (!live()) return controller.abort(new ConnectionWaitTimeoutError(waitMs));
          stopWaiting();
          handler.onRequestStart?.(controller, context);
        },
        onRequestUpgrade(controller, statusCode, headers, socket) {
          if (live()) handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
        },
        onResponseStart(controller, statusCode, headers, statusMessage) {
          if (live()) handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
        },
        onResponseData(controller, chunk) {
          if (live()) handler.onResponseData?.(controller, chunk);
        },
        onResponseEnd(controller, trailers) {
          if (live()) handler.onResponseEnd?.(controller, trailers);
        },
        onResponseError(controller, error) {
          if (!live()) return;
          stopWaiting();
          handler.onResponseError?.(controller, error);
        },
      });
    };
}

interface ProviderPool {
  key: string;
  generation: number;
  dispatcher: Undici.Dispatcher;
  agent: Undici.Agent;
}

/** The pool each provider object was served with: the hot path's lookup, and a stale snapshot keeps its pool. */
const poolOfProvider = new WeakMap<ProviderConfig, ProviderPool>();
/** The newest pool of each provider name; replaced (not closed: its idle connections expire) when settings change. */
const currentPools = new Map<string, ProviderPool>();
/** Extra TLS trust for upstream connections (tests: a self-signed HTTP/2 mock); null: the system's CAs. */
let trustedCa: string | null = null;
/** Bumped when the TLS trust changes: every pool made before is stale. */
let generation = 0;

const KEEP_ALIVE = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 } as const;
/** Requests in flight on one HTTP/2 connection (undici's maxConcurrentStreams default; an upstream's SETTINGS may lower it). */
export const H2_STREAMS_PER_CONNECTION = 100;

/**
 * A connection's client, told after the TLS handshake how many requests it may carry: undici 7
 * leaves an HTTP/2 client at `pipelining` 1 (its HTTP/2 default never applies once the option is
 * defaulted), which would make HTTP/2 one request per connection; HTTP/1.1 keeps 1 (no pipelining).
 */
function clientFactory(undici: typeof Undici) {
  return (origin: URL, options: object): Undici.Dispatcher => {
    const connect = (options as { connect: Undici.buildConnector.connector }).connect;
    const client: Undici.Client = new undici.Client(origin, {
      ...options,
      connect: (connectOptions, callback) =>
        connect(connectOptions, (...args) => {
          // On a failed connect undici passes the error alone (no socket argument at all).
          const socket = args[1] as { alpnProtocol?: string | false } | null | undefined;
          if (socket) client.pipelining = socket.alpnProtocol === "h2" ? H2_STREAMS_PER_CONNECTION : 1;
          callback(...args);
        }),
    });
    return client;
  };
}

export function poolSettingsOf(provider: ProviderConfig): PoolSettings {
  return { maxConnections: provider.maxConnections, connectionWaitMs: provider.connectionWaitMs, http2: provider.http2, connectTimeoutMs: provider.connectTimeoutMs };
}

function makePool(undici: typeof Undici, name: string, settings: PoolSettings, key: string): ProviderPool {
  const clients = clientFactory(undici);
  const agent = new undici.Agent({
    ...KEEP_ALIVE,
    connections: settings.maxConnections,
    allowH2: settings.http2,
    connect: { timeout: settings.connectTimeoutMs, ...(trustedCa !== null && { ca: trustedCa }) },
    factory: (origin, options) => new undici.Pool(origin, { ...options, factory: clients }),
  });
  return { key, generation, agent, dispatcher: agent.compose(boundedWait(name, settings.connectionWaitMs)) };
}

/** The provider's pool, made on its first request (and again when its settings change). */
export function poolFor(undici: typeof Undici, provider: ProviderConfig): Undici.Dispatcher {
  const known = poolOfProvider.get(provider);
  if (known !== undefined && known.generation === generation) return known.dispatcher;
  const settings = poolSettingsOf(provider);
  const key = `${settings.maxConnections}/${settings.connectionWaitMs}/${settings.http2}/${settings.connectTimeoutMs}`;
  let pool = currentPools.get(provider.name);
  if (!pool || pool.key !== key || pool.generation !== generation) {
    pool = makePool(undici, provider.name, settings, key);
    currentPools.set(provider.name, pool);
    if (!waitingByProvider.has(provider.name)) waitingByProvider.set(provider.name, 0);
  }
  poolOfProvider.set(provider, pool);
  return pool.dispatcher;
}

/** Trusts this CA (PEM) for upstream TLS besides the system's, for pools made from now on. */
export function trustUpstreamCa(pem: string | null): void {
  trustedCa = pem;
  generation += 1;
}

/** Closes every current pool (shutdown): in-flight requests finish first. */
export async function closeProviderPools(): Promise<void> {
  const pools = [...currentPools.values()];
  currentPools.clear();
  await Promise.all(pools.map((pool) => pool.agent.close().catch(() => undefined)));
}
