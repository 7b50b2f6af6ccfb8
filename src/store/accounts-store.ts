// Accounts: creation, status, and administrator balance changes (each with its ledger row, atomically).
import { limitsColumn, subjectLimitsOf, type SubjectLimits, type SubjectLimitsInput } from "../core/traffic-limits.js";
import type { Kysely, Selectable, Transaction } from "kysely";
import { GatewayError } from "../errors/catalogue.js";
import { newId, nowMs } from "../core/ids.js";
import { MAX_BALANCE, type Nano } from "../core/money.js";
import { OPERATOR_ACCOUNT_ID } from "./operator-usage.js";
import { recordAuthChange } from "./auth-events.js";
import { dbErrorKind } from "./db-errors.js";
import { recordCreditAlert } from "./alerts-store.js";
import type { AccountsTable, Database } from "./tables.js";
import { transact } from "./transact.js";

export type AccountStatus = AccountsTable["status"];
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ["active", "suspended", "closed"];

export interface Account {
  id: string;
  email: string;
  status: AccountStatus;
  tier: string;
  isAdmin: boolean;
  balance: Nano;
  totalSpent: Nano;
  held: Nano;
  heldTokens: number;
  monthlyBudget: Nano | null;
  monthlyTokenBudget: number | null;
  defaultModel: string | null;
  /** Requests its limits cannot fully cover are admitted with a lowered output limit (docs/billing.md, "Clamping"). */
  clampOutput: boolean;
  /** The account's own rate and concurrency limits (src/core/traffic-limits.ts); null: only the tier's. */
  limits: SubjectLimits | null;
  /** Whether the account has a dashboard password (an account made by an administrator has none until its set-password link is used). */
  hasPassword: boolean;
  createdAt: number;
}

export interface NewAccount {
  email: string;
  tier: string;
  balance?: Nano;
  monthlyBudget?: Nano | null;
  monthlyTokenBudget?: number | null;
  isAdmin?: boolean;
  passwordHash?: string | null;
  defaultModel?: string | null;
  clampOutput?: boolean;
}

export function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    status: row.status,
    tier: row.tier,
    isAdmin: row.is_admin === 1n,
    balance: BigInt(row.balance_nano),
    totalSpent: BigInt(row.total_spent_nano),
    held: BigInt(row.held_nano),
    heldTokens: Number(row.held_tokens),
    monthlyBudget: row.monthly_budget_nano === null ? null : BigInt(row.monthly_budget_nano),
    monthlyTokenBudget: row.monthly_token_budget === null ? null : Number(row.monthly_token_budget),
    defaultModel: row.default_model,
    clampOutput: row.clamp_output !== 0n,
    limits: subjectLimitsOf(row.limits),
    hasPassword: row.password_hash !== null,
    createdAt: Number(row.created_at),
  };
}

export class AccountsStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * A new account. A starting balance is a credit like any other: its ledger row ("opening balance")
   * is written in the same transaction as the account, so every balance is explained by the ledger.
   */
  async create(input: NewAccount): Promise<Account> {
    const balance = input.balance ?? 0n;
    if (balance < 0n || balance > MAX_BALANCE) throw new GatewayError("balance_invariant");
    const now = nowMs();
    try {
      return await transact(this.db, async (trx) => {
        const row = await trx
          .insertInto("accounts")
          .values({
            id: newId("acct"),
            email: input.email.trim().toLowerCase(),
            password_hash: input.passwordHash ?? null,
            status: "active",
            tier: input.tier,
            is_admin: input.isAdmin ? 1n : 0n,
            balance_nano: balance,
            total_spent_nano: 0n,
            held_nano: 0n,
            held_tokens: 0n,
            monthly_budget_nano: input.monthlyBudget ?? null,
            monthly_token_budget: input.monthlyTokenBudget == null ? null : BigInt(input.monthlyTokenBudget),
            default_model: input.defaultModel ?? null,
            // Only when turned off: on is the column's default (and a database migrated only part way has no such column).
            ...(input.clampOutput === false && { clamp_output: 0n }),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        if (balance > 0n) await appendBalanceChange(trx, row.id, balance, OPENING_BALANCE_NOTE, now);
        return toAccount(row);
      });
    } catch (error) {
      if (dbErrorKind(error) === "unique") throw new GatewayError("invalid_request", `an account with email ${input.email} already exists`, { param: "email" });
      throw error;
    }
  }

  async get(id: string): Promise<Account | null> {
    const row = await this.db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  async getByEmail(email: string): Promise<Account | null> {
    const row = await this.db.selectFrom("accounts").selectAll().where("email", "=", email.trim().toLowerCase()).executeTakeFirst();
    return row ? toAccount(row) : null;
  }

  async passwordHash(id: string): Promise<string | null> {
    const row = await this.db.selectFrom("accounts").select("password_hash").where("id", "=", id).executeTakeFirst();
    return row?.password_hash ?? null;
  }

  async setPasswordHash(id: string, hash: string): Promise<void> {
    await this.db.updateTable("accounts").set({ password_hash: hash, updated_at: nowMs() }).where("id", "=", id).execute();
  }

  async list(options: { limit?: number; offset?: number } = {}): Promise<Account[]> {
    const rows = await this.db
      .selectFrom("accounts")
      .selectAll()
      .where("id", "!=", OPERATOR_ACCOUNT_ID)
      .orderBy("created_at")
      .orderBy("id")
      .limit(options.limit ?? 1000)
      .offset(options.offset ?? 0)
      .execute();
    return rows.map(toAccount);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom("accounts")
      .select((eb) => eb.fn.countAll<bigint>().as("n"))
      .where("id", "!=", OPERATOR_ACCOUNT_ID)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  setStatus(id: string, status: AccountStatus): Promise<Account> {
    return this.update(id, { status });
  }

  /** Changes an account's settings; other processes drop its cached keys through an auth event. */
  async update(
    id: string,
    changes: {
      status?: AccountStatus;
      tier?: string;
      monthlyBudget?: Nano | null;
      monthlyTokenBudget?: number | null;
      defaultModel?: string | null;
      isAdmin?: boolean;
      clampOutput?: boolean;
      /** The account's own rate and concurrency limits (src/core/traffic-limits.ts); null removes them. */
      limits?: SubjectLimitsInput | null;
    },
  ): Promise<Account> {
    return transact(this.db, async (trx) => {
      const row = await trx
        .updateTable("accounts")
        .set({
          ...(changes.status !== undefined && { status: changes.status }),
          ...(changes.tier !== undefined && { tier: changes.tier }),
          ...(changes.monthlyBudget !== undefined && { monthly_budget_nano: changes.monthlyBudget }),
          ...(changes.monthlyTokenBudget !== undefined && {
            monthly_token_budget: changes.monthlyTokenBudget === null ? null : BigInt(changes.monthlyTokenBudget),
          }),
          ...(changes.defaultModel !== undefined && { default_model: changes.defaultModel }),
          ...(changes.isAdmin !== undefined && { is_admin: changes.isAdmin ? 1n : 0n }),
          ...(changes.clampOutput !== undefined && { clamp_output: changes.clampOutput ? 1n : 0n }),
          ...(changes.limits !== undefined && { limits: limitsColumn(changes.limits) }),
          updated_at: nowMs(),
        })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new GatewayError("account_not_found", `no account ${id}`);
      await recordAuthChange(trx, { accountId: id });
      return toAccount(row);
    });
  }

  /**
   * An administrator credit (positive) or debit (negative): one transaction that moves the balance
   * and appends a ledger row. Outside 0.00..1,000,000.00: balance_invariant, nothing written.
   */
  async adjustBalance(id: string, delta: Nano, note: string | null = null): Promise<Account> {
    if (delta === 0n) throw new GatewayError("invalid_request", "the amount must not be zero", { param: "amount" });
    return transact(this.db, async (trx) => {
      const row = await trx
        .updateTable("accounts")
        .set((eb) => ({ balance_nano: eb("balance_nano", "+", delta), updated_at: nowMs() }))
        .where("id", "=", id)
        .where((eb) => eb.and([eb(eb("balance_nano", "+", delta), ">=", 0n), eb(eb("balance_nano", "+", delta), "<=", MAX_BALANCE)]))
        .returningAll()
        .executeTakeFirst();
      if (!row) {
        const exists = await trx.selectFrom("accounts").select("id").where("id", "=", id).executeTakeFirst();
        if (!exists) throw new GatewayError("account_not_found", `no account ${id}`);
        throw new GatewayError("balance_invariant", "the balance must stay within 0.00 and 1000000.00");
      }
      const now = nowMs();
      await appendBalanceChange(trx, id, delta, note, now);
      const account = toAccount(row);
      // The hook of every credit (redemption codes, administrators, card top-ups): its alert commits with it.
      if (delta > 0n) await recordCreditAlert(trx, { accountId: id, amount: delta, balance: account.balance, note }, Number(now));
      return account;
    });
  }
}

/** The note of the credit row that records an account's starting balance. */
export const OPENING_BALANCE_NOTE = "opening balance";

/** The ledger row of a balance change outside settlement: a credit (delta > 0) or a debit. */
async function appendBalanceChange(trx: Transaction<Database>, accountId: string, delta: Nano, note: string | null, now: bigint): Promise<void> {
  await trx
    .insertInto("ledger")
    .values({
      created_at: now,
      account_id: accountId,
      key_id: null,
      request_id: newId(delta > 0n ? "credit" : "debit"),
      kind: delta > 0n ? "credit" : "debit",
      model: null,
      provider: null,
      route: null,
      input_tokens: 0n,
      cached_tokens: 0n,
      output_tokens: 0n,
      reasoning_tokens: 0n,
      cost_nano: delta > 0n ? delta : -delta,
      estimated: 0n,
      note,
    })
    .execute();
}
