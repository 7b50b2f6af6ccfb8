// The audit log's actor of a CLI write: "cli", named by the operating-system user running it.
import { userInfo } from "node:os";
import type { AuditActor } from "../../store/audit-store.js";

export function cliActor(): AuditActor {
  let user: string | null = null;
  try {
    user = userInfo().username;
  } catch {
    // no user database entry (some containers): the actor stays "cli"
  }
  return { type: "cli", id: null, name: user, clientAddress: null, requestId: null };
}
