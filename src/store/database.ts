// Opens the metadata database (SQLite in WAL through kysely) and applies the versioned migrations in ./migrations.
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './schema.js';
import { registerChangeDetector } from './change-version.js';

export type Db = Kysely<Database>;

const migrationsDir = join(import.meta.dirname, 'migrations');

class GlobMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const file of readdirSync(migrationsDir).filter((f) => /^\d+.*\.(ts|js)$/.test(f)).sort()) {
      out[file.replace(/\.(ts|js)$/, '')] = (await import(pathToFileURL(join(migrationsDir, file)).href)) as Migration;
    }
    return out;
  }
}

export interface OpenedDatabase {
  db: Db;
  /** The raw SQLite handle, for the few spots that need a synchronous transaction. */
  sqlite?: BetterSqlite3.Database;
  close(): Promise<void>;
}

export async function openSqlite(path: string): Promise<OpenedDatabase> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.defaultSafeIntegers(false);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db);
  const authVersion = sqlite.prepare("select version from change_counters where name = 'auth'").pluck();
  registerChangeDetector(db, () => authVersion.get() as number);
  return { db, sqlite, close: () => db.destroy() };
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new GlobMigrationProvider(), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? 'unknown error'}`);
}
