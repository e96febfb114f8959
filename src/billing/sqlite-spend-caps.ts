// The caps a key stands under on the embedded database, cached while the change counter of keys and workspaces stands still.
import type BetterSqlite3 from 'better-sqlite3';
import { ChangeCache } from '../store/change-version.js';
import type { BudgetPeriod } from '../config/periods.js';
import { capStatements, type ModelCap } from './sqlite-spend-statements.js';

export interface Caps {
  keyCap: number | null;
  keyPeriod: BudgetPeriod;
  workspaceCap: number | null;
  workspacePeriod: BudgetPeriod;
  /** Caps on single models of the key and its workspace; null when there are none. */
  modelCaps: ModelCap[] | null;
  /** Some cap counts per period or per model, so settlements keep spend_periods. */
  periodic: boolean;
}

export interface CapsReader {
  /** The caps of a key; undefined for an unknown key. */
  capsOf(keyId: string): Caps | undefined;
}

/** An uncapped key in an uncapped workspace (or an unknown key): nothing to hold against. */
export function uncapped(caps: Caps | undefined): boolean {
  return caps === undefined || (caps.keyCap === null && caps.workspaceCap === null && caps.modelCaps === null);
}

/**
 * Reads caps through `sqlite`. `changeVersion` reads the change counter (a cap change bumps it); while it stands still
 * the caps of a key are kept. Without it every call reads the database.
 */
export function createCapsReader(sqlite: BetterSqlite3.Database, changeVersion?: () => number | undefined): CapsReader {
  const statements = capStatements(sqlite);
  const read = (keyId: string): Caps | undefined => {
    const row = statements.subjectCaps.get(keyId);
    if (!row) return undefined;
    const models = statements.modelCaps.all(keyId, row.workspaceId);
    const modelCaps = models.length ? models : null;
    const periodic = modelCaps !== null || (row.keyCap !== null && row.keyPeriod !== 'total') || (row.workspaceCap !== null && row.workspacePeriod !== 'total');
    return { keyCap: row.keyCap, keyPeriod: row.keyPeriod, workspaceCap: row.workspaceCap, workspacePeriod: row.workspacePeriod, modelCaps, periodic };
  };
  const cache = new ChangeCache<Caps | undefined>();
  return {
    capsOf(keyId) {
      const version = changeVersion?.();
      if (version === undefined) return read(keyId);
      const caps = cache.at(version);
      if (!caps.has(keyId)) caps.set(keyId, read(keyId));
      return caps.get(keyId);
    },
  };
}

/** The change counter read once per batch: `next()` forgets the last read, `read()` reads it at most once after that. */
export function batchChangeVersion(sqlite: BetterSqlite3.Database) {
  const statement = capStatements(sqlite).changeVersion;
  let version: number | undefined;
  return {
    next: () => void (version = undefined),
    read: () => (version ??= statement.get() as number),
  };
}
