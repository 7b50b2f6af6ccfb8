// How a process learns that the catalog changed, in whichever process or worker the change was
// made: it reads the head serial (one row) every `pollMs`, and on PostgreSQL it also LISTENs on the
// catalog channel, so a change is seen as soon as its transaction commits; the poll then only
// covers a dropped LISTEN connection. SQLite has no notifications, and the processes sharing its
// file are on one host, so there the poll is the signal: one indexed one-row read every 250 ms.
import type { DatabaseHandle } from "./database.js";
import { CATALOG_CHANNEL, type CatalogStore } from "./catalog-store.js";

export interface CatalogWatch {
  stop(): Promise<void>;
}

export async function watchCatalog(
  handle: DatabaseHandle,
  catalog: CatalogStore,
  onChange: (head: bigint) => Promise<void>,
  options: { pollMs: number; onError(error: unknown): void },
): Promise<CatalogWatch> {
  let seen = await catalog.head();
  let checking: Promise<void> | null = null;
  let again = false;
  const check = (): Promise<void> => {
    // One check at a time; a signal during a check runs one more after it.
    if (checking) {
      again = true;
      return checking;
    }
    checking = (async () => {
      do {
        again = false;
        try {
          const head = await catalog.head();
          if (head !== seen) {
            await onChange(head);
            seen = head;
          }
        } catch (error) {
          options.onError(error);
        }
      } while (again);
    })().finally(() => {
      checking = null;
    });
    return checking;
  };
  const timer = setInterval(() => void check(), options.pollMs);
  timer.unref();
  const onError = (error: unknown) => options.onError(error);
  const unlisten = handle.listen
    ? await handle
        .listen(CATALOG_CHANNEL, () => void check(), onError)
        .catch((error: unknown) => {
          onError(error);
          return null;
        })
    : null;
  return {
    async stop() {
      clearInterval(timer);
      await unlisten?.();
      await checking;
    },
  };
}
