// The storage port: one set of repositories over Kysely, the same code on SQLite and PostgreSQL.
import { SecretBox } from "../core/secret-box.js";
import { DEFAULT_MIGRATION_TABLE, sql, type Transaction } from "kysely";
import { AccountsStore } from "./accounts-store.js";
import { AlertsStore } from "./alerts-store.js";
import { AdminTokensStore } from "./admin-tokens-store.js";
import { AttemptsStore } from "./attempts-store.js";
import { appendAudit, AuditStore, type AuditActor, type AuditChange } from "./audit-store.js";
import { openDatabase, type DatabaseHandle, type DatabaseOptions } from "./database.js";
import { KeysStore } from "./keys-store.js";
import { ledgerChainColumns } from "./ledger-chain.js";
import { lockedChainMessage } from "./ledger-chain-key.js";
import { LedgerStore } from "./ledger-store.js";
import { MIGRATION_NAMES } from "./migration-names.js";
import { PasswordLinksStore } from "./password-links-store.js";
import { RedemptionCodesStore } from "./redemption-codes-store.js";
import { SessionsStore } from "./sessions-store.js";
import { StripeEventsStore } from "./stripe-events-store.js";
import { ShowAgainStore } from "./show-again-store.js";
import { ResponsesStore } from "./responses-store.js";
import { CatalogStore } from "./catalog-store.js";
import { FileKeyStatesStore } from "./file-key-states-store.js";
import { HealthProbesStore } from "./health-probes-store.js";
import { LeasesStore } from "./leases-store.js";
import { UpstreamHealthStore } from "./upstream-health-store.js";
import { UpstreamKeysStore } from "./upstream-keys-store.js";
import { VideoTasksStore } from "./video-tasks-store.js";
import type { Database } from "./tables.js";
import { WorkspacesStore } from "./workspaces-store.js";
import { WorkspaceBudgetsStore } from "./workspace-budgets-store.js";
import { TagBudgetsStore } from "./tag-budgets-store.js";
import { transact } from "./transact.js";
import { CacheSettingsStore } from "./cache-settings-store.js";

/**
 * The stores bound to one transaction, for an audited change: every write made through them and the
 * audit rows appended with record() commit together or not at all.
 */
export interface AuditedTransaction {
  trx: Transaction<Database>;
  accounts: AccountsStore;
  keys: KeysStore;
  upstreamKeys: UpstreamKeysStore;
  adminTokens: AdminTokensStore;
  workspaces: WorkspacesStore;
  workspaceBudgets: WorkspaceBudgetsStore;
  ledger: LedgerStore;
  codes: RedemptionCodesStore;
  catalog: CatalogStore;
  fileKeys: FileKeyStatesStore;
  sessions: SessionsStore;
  passwordLinks: PasswordLinksStore;
  cacheSettings: CacheSettingsStore;
  alerts: AlertsStore;
  record(change: AuditChange): Promise<void>;
}

export class Store {
  readonly accounts: AccountsStore;
  readonly keys: KeysStore;
  readonly ledger: LedgerStore;
  readonly upstreamKeys: UpstreamKeysStore;
  readonly upstreamHealth: UpstreamHealthStore;
  readonly sessions: SessionsStore;
  readonly showAgain: ShowAgainStore;
  readonly workspaces: WorkspacesStore;
  readonly workspaceBudgets: WorkspaceBudgetsStore;
  readonly tagBudgets: TagBudgetsStore;
  readonly responses: ResponsesStore;
  readonly videoTasks: VideoTasksStore;
  readonly adminTokens: AdminTokensStore;
  readonly audit: AuditStore;
  readonly codes: RedemptionCodesStore;
  readonly attempts: AttemptsStore;
  readonly catalog: CatalogStore;
  readonly fileKeys: FileKeyStatesStore;
  readonly leases: LeasesStore;
  readonly healthProbes: HealthProbesStore;
  readonly passwordLinks: PasswordLinksStore;
  readonly stripeEvents: StripeEventsStore;
  readonly cacheSettings: CacheSettingsStore;
  readonly alerts: AlertsStore;
  /** The readiness check under way (ping). */
  #pinging: Promise<boolean> | undefined;

  constructor(
    readonly handle: DatabaseHandle,
    readonly box: SecretBox,
    /** Migrations a later release applied to this database (ADR 0050); empty when it is this code's schema. */
    readonly newerMigrations: readonly string[] = [],
  ) {
    this.accounts = new AccountsStore(handle.db);
    this.keys = new KeysStore(handle.db);
    this.ledger = new LedgerStore(handle.db, handle.dialect, ledgerChainColumns(handle.dimensions), handle.ledgerChain);
    this.upstreamKeys = new UpstreamKeysStore(handle.db, box);
    this.upstreamHealth = new UpstreamHealthStore(handle.db);
    this.attempts = new AttemptsStore(handle.db, handle.dialect);
    this.sessions = new SessionsStore(handle.db);
    this.showAgain = new ShowAgainStore(handle.db, box);
    this.workspaces = new WorkspacesStore(handle.db);
    this.workspaceBudgets = new WorkspaceBudgetsStore(handle.db);
    this.tagBudgets = new TagBudgetsStore(handle.db);
    this.responses = new ResponsesStore(handle.db);
    this.videoTasks = new VideoTasksStore(handle.db);
    this.adminTokens = new AdminTokensStore(handle.db);
    this.audit = new AuditStore(handle.db);
    this.codes = new RedemptionCodesStore(handle.db);
    this.catalog = new CatalogStore(handle.db, box, handle.dialect);
    this.fileKeys = new FileKeyStatesStore(handle.db, box, handle.dialect);
    this.leases = new LeasesStore(handle.db);
    this.healthProbes = new HealthProbesStore(handle.db);
    this.passwordLinks = new PasswordLinksStore(handle.db);
    this.stripeEvents = new StripeEventsStore(handle.db);
    this.cacheSettings = new CacheSettingsStore(handle.db);
    this.alerts = new AlertsStore(handle.db, box, handle.dialect);
  }

  /**
   * An administrative change and its audit rows in one transaction (docs/operations.md, "Audit
   * log"): `work` makes the change through the stores it is given and records it; when anything in
   * it fails, neither the change nor an audit row remains.
   */
  audited<T>(actor: AuditActor, work: (tx: AuditedTransaction) => Promise<T>): Promise<T> {
    return transact(this.db, (trx) =>
      work({
        trx,
        accounts: new AccountsStore(trx),
        keys: new KeysStore(trx),
        upstreamKeys: new UpstreamKeysStore(trx, this.box),
        adminTokens: new AdminTokensStore(trx),
        // The same injected failure point as this store's, for the fault tests of workspace writes.
        workspaces: new WorkspacesStore(trx, { failAfter: this.workspaces.failAfter }),
        workspaceBudgets: new WorkspaceBudgetsStore(trx),
        ledger: new LedgerStore(trx, this.handle.dialect, ledgerChainColumns(this.handle.dimensions), this.handle.ledgerChain),
        codes: new RedemptionCodesStore(trx),
        catalog: new CatalogStore(trx, this.box, this.handle.dialect),
        fileKeys: new FileKeyStatesStore(trx, this.box, this.handle.dialect),
        sessions: new SessionsStore(trx),
        passwordLinks: new PasswordLinksStore(trx),
        cacheSettings: new CacheSettingsStore(trx),
        alerts: new AlertsStore(trx, this.box, this.handle.dialect),
        record: (change) => appendAudit(trx, actor, change),
      }),
    );
  }

  get db() {
    return this.handle.db;
  }

  get dialect() {
    return this.handle.dialect;
  }

  /**
   * True when a trivial query answers: what /readyz reports. Checks that come while one is under way
   * share its answer: a balancer checking every 500 ms a host cut off from the database would
   * otherwise hold a pooled connection per check for the query timeout, and leave none to requests.
   */
  ping(): Promise<boolean> {
    this.#pinging ??= this.db
      .selectFrom("accounts")
      .select("id")
      .limit(1)
      .execute()
      .then(
        () => true,
        () => false,
      )
      .finally(() => (this.#pinging = undefined));
    return this.#pinging;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

export interface StoreOptions extends DatabaseOptions {
  secret: string;
  /** false: leaves the schema as it is, and the ledger chain's keys unread (tests that migrate step by step). */
  migrate?: boolean;
  /**
   * The gateway server, the ledger's writer: with `ledgerSecret` and a chain not keyed yet, it keys
   * the chain from the next ledger row on (ledger-chain-key.ts), and it refuses to open a chain it
   * could not append to (keyed, and its secret absent or another). A CLI command does neither.
   */
  ledgerWriter?: boolean;
}

/**
 * Opens and migrates the database, then reads the ledger chain's keys (ledger-chain-key.ts). A store
 * whose chain is keyed with another secret, or opened without one, is "locked": it reads, and appends
 * no ledger row (handle.ledgerChain.mode); as the ledger's writer it is not opened at all.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const handle = await openDatabase(options);
  let newerMigrations: string[] = [];
  try {
    if (options.migrate !== false) {
      newerMigrations = await migrateIfBehind(handle);
      const mode = await handle.ledgerChain.establish(handle.db, handle.dialect, handle.sqlite, options.ledgerWriter === true);
      if (options.ledgerWriter === true && mode.kind === "locked") throw new Error(lockedChainMessage(mode));
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  return new Store(handle, new SecretBox(options.secret), newerMigrations);
}

/**
 * What `migrate` does, at the cost of one query when the database is up to date: its recorded
 * migrations are exactly MIGRATION_NAMES (then, on PostgreSQL, the billing functions are created
 * afresh, as `migrate` does after its last migration). A database a later release has migrated
 * (every name of this code's, then only names after its last) is left as it is, its billing
 * functions included: migrations are expand-only and that release's functions accept this one's
 * calls (ADR 0050), so this release serves beside it or after a rollback. Otherwise (a new database,
 * one behind the code, one that lacks one of this code's migrations, or a query that fails)
 * migrate.ts runs, loaded only then: Kysely's migrator and every migration module, which apply
 * what is missing or report what is wrong. Returns the later release's migration names.
 */
async function migrateIfBehind(handle: DatabaseHandle): Promise<string[]> {
  const state = await schemaState(handle);
  if (state.kind === "ahead") return state.newer;
  if (state.kind === "current") {
    if (handle.dialect === "postgres") await (await import("./billing-functions.js")).createBillingFunctions(handle.db, handle.dimensions);
    return [];
  }
  await (await import("./migrate.js")).migrate(handle);
  return [];
}

type SchemaState = { kind: "current" } | { kind: "ahead"; newer: string[] } | { kind: "other" };

async function schemaState(handle: DatabaseHandle): Promise<SchemaState> {
  let recorded: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(handle.db);
    recorded = rows.map((row) => row.name);
  } catch {
    return { kind: "other" };
  }
  const names = new Set<string>(MIGRATION_NAMES);
  const last = MIGRATION_NAMES[MIGRATION_NAMES.length - 1]!;
  const known = recorded.filter((name) => names.has(name));
  const newer = recorded.filter((name) => !names.has(name));
  if (known.length !== names.size) return { kind: "other" };
  if (newer.length === 0) return { kind: "current" };
  // Kysely orders migrations by name: one sorting before this code's last is not a later release's.
  return newer.every((name) => name > last) ? { kind: "ahead", newer: newer.sort() } : { kind: "other" };
}
