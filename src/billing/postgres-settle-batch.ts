// Settlements on PostgreSQL in batches: what arrives while a batch is out goes together in the next one, one
// statement (spend_settle_batch, migration 017) for all of them. Alone when nothing else is waiting: no added wait.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { BudgetCalendar } from '../config/periods.js';

/** Most settlements one statement carries. */
const MAX_BATCH = 256;

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

  /** Resolves once every settlement handed over so far has committed. */
  async drain(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async sendAll(): Promise<void> {
    // Settlements made in this turn of the event loop go in the first batch together.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      await this.send(batch);
    }
    this.sending = undefined;
  }

  private async send(batch: Waiting[]): Promise<void> {
    try {
      const { rows } = await sql<{ id: string; settled: boolean }>`select id, settled from spend_settle_batch(${JSON.stringify(batch.map((w) => w.item))}::jsonb)`.execute(this.db);
      const settled = new Map(rows.map((row) => [row.id, row.settled]));
      for (const w of batch) w.resolve(settled.get(w.item.id) === true);
    } catch (error) {
      // The batch rolled back whole: each settlement is tried alone, so one that cannot commit fails only itself.
      if (batch.length === 1) return batch[0].reject(error);
      for (const w of batch) await this.send([w]);
    }
  }
}
