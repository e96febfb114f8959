// What the admin API uses, named apart from the code that assembles the gateway: the database, the current config
// (admin tokens, public URL) and the config reload.
import type { BudgetCalendar } from '../config/periods.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Db } from '../store/db.js';

export interface AdminDeps {
  readonly config: LoadedConfig;
  db: Db;
  /** Where budget periods begin and end (billing.timeZone). */
  calendar: BudgetCalendar;
  /** The clock budget periods are read at (Unix milliseconds). */
  now(): number;
  /** Loads and checks the config file again and swaps the runtime snapshot (throws the ConfigError of a bad one). */
  reload(): Promise<LoadedConfig>;
  /** Commits the request-log rows this process has queued, before a list reads them. */
  readonly requestLogs: { commitQueued(): Promise<void> };
  /** How many requests still finish on an older config (logged after a reload). */
  readonly runtime: { readonly draining: number };
}
