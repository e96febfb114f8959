// Settlements on PostgreSQL in batches: what arrives while a batch is out goes together in the next one, one
// statement (spend_settle_batch, migration 017) for all of them. Alone when nothing else is waiting: no added wait.
// Request-log rows ride along in the same statement (a data-modifying WITH): they wait up to LOG_WAIT_MS for a batch of
// settlements to go out, and only then go alone, so logging adds no round trip while settlements flow.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { BudgetCalendar } from '../config/periods.js';
import { requestLogColumns, requestLogPgTypes, type RequestLogValues } from '../store/request-log-table.js';

/** Most settlements one statement carries. */
const MAX_BATCH = 256;
/** Most request-log handovers (each a turn's rows) one statement carries. */
const MAX_LOGS = 64;
/** How long a request-log row waits for settlements to ride with before it goes alone. */
const LOG_WAIT_MS = 100;

const logInsert = sql.raw(
  `inserted as (insert into request_logs (${requestLogColumns.join(', ')}) select ${requestLogColumns.map((c, i) => `(e->>${i})::${requestLogPgTypes[c]}`).join(', ')} from jsonb_array_elements(`,
);
/** The rows inserted (a row already there is skipped) added to their workspaces' counts, in the same statement. */
const logCount = sql.raw(
  `counted as (insert into request_log_counts (workspace_id, row_count) select workspace_id, count(*) from inserted group by workspace_id
     order by workspace_id on conflict (workspace_id) do update set row_count = request_log_counts.row_count + excluded.row_count)`,
);

interface WaitingLog {
  rows: RequestLogValues[];
  resolve(): void;
  reject(error: unknown): void;
}

interface Item {
  id: string;
  entry: LedgerEntry;
  daily: number;
  weekly: number;
  monthly: number;
}

interface Waiting {
  item: Item;
  resolve(settled: boolean): void;
  reject(error: unknown): void;
}

export class PostgresSettleBatcher {
  private waiting: Waiting[] = [];
  private logs: WaitingLog[] = [];
  private logTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly calendar: BudgetCalendar,
  ) {}

  /** Settles one reservation (idempotent by its id: a second settle, from any replica, inserts nothing). */
  settle(reservationId: string, entry: LedgerEntry): Promise<boolean> {
    const reservedAt = Number(entry.reserved_at ?? Number(entry.created_at) * 1000);
    const { daily, weekly, monthly } = this.calendar.starts(reservedAt);
    const item = { id: reservationId, entry: { overage_micros: 0, ...entry, reserved_at: reservedAt }, daily, weekly, monthly };
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.sending ??= this.sendAll();
    });
  }

  /** Writes request-log rows with the next batch of settlements, or alone after LOG_WAIT_MS; resolves once committed. */
  appendLogs(rows: RequestLogValues[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.logs.push({ rows, resolve, reject });
      if (!this.sending) this.logTimer ??= setTimeout(this.logsDue, LOG_WAIT_MS).unref();
    });
  }

  private readonly logsDue = (): void => {
    this.logTimer = undefined;
    this.sending ??= this.sendAll();
  };

  /** Resolves once every settlement and request-log row handed over so far has committed. */
  async drain(): Promise<void> {
    if (this.logs.length > 0 && !this.sending) this.logsDue();
    while (this.sending) await this.sending;
  }

  private async sendAll(): Promise<void> {
    clearTimeout(this.logTimer);
    this.logTimer = undefined;
    // Settlements made in this turn of the event loop go in the first batch together.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.waiting.length > 0 || this.logs.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      const logs = this.logs.splice(0, MAX_LOGS);
      await this.send(batch, logs);
    }
    this.sending = undefined;
  }

  private async send(batch: Waiting[], logs: WaitingLog[]): Promise<void> {
    try {
      const logRows = logs.length ? sql`${logInsert}${JSON.stringify(logs.flatMap((l) => l.rows))}::jsonb) e on conflict do nothing returning workspace_id), ${logCount}` : undefined;
      if (batch.length === 0) await sql`with ${logRows!} select 1`.execute(this.db);
      else {
        const items = JSON.stringify(batch.map((w) => w.item));
        const query = logRows
          ? sql<{ id: string; settled: boolean }>`with ${logRows} select id, settled from spend_settle_batch(${items}::jsonb)`
          : sql<{ id: string; settled: boolean }>`select id, settled from spend_settle_batch(${items}::jsonb)`;
        const { rows } = await query.execute(this.db);
        const settled = new Map(rows.map((row) => [row.id, row.settled]));
        for (const w of batch) w.resolve(settled.get(w.item.id) === true);
      }
      for (const l of logs) l.resolve();
    } catch (error) {
      // The batch rolled back whole: each settlement is tried alone, so one that cannot commit fails only itself.
      if (batch.length + logs.length === 1) return (batch[0] ?? logs[0]).reject(error);
      for (const w of batch) await this.send([w], []);
      for (const l of logs) await this.send([], [l]);
    }
  }
}
