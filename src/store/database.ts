// Opens the metadata database (SQLite in WAL, or PostgreSQL for several replicas) through kysely and applies the migrations.
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  SelectQueryNode,
  sql,
  type DatabaseConnection,
  type QueryResult,
  type Driver,
  type Migration,
  type MigrationProvider,
  type SqliteDialectConfig,
} from 'kysely';
import type { Database } from './schema.js';
import type { Db } from './db.js';
import { registerChangeDetector } from './change-version.js';
import { epochFileOf, watchChangeSignal } from './change-signal.js';
import { isPostgres } from './dialect.js';
import { startCheckpointer } from './checkpointer.js';

export type { Db } from './db.js';

// Beside this module in src/ and dist/; from the admin CLI's bundle (dist/cli/admin.js) the same folder of dist/.
const migrationsDir = join(import.meta.dirname, '..', 'store', 'migrations');

/**
 * Every migration file by name, each imported only when the migrator runs it: a database already up to date (every
 * start but the first, every admin command) loads none of them.
 */
class GlobMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const file of readdirSync(migrationsDir).filter((f) => /^\d+.*\.(ts|js)$/.test(f)).sort()) {
      const load = () => import(pathToFileURL(join(migrationsDir, file)).href) as Promise<Migration>;
      out[file.replace(/\.(ts|js)$/, '')] = { up: async (db) => (await load()).up(db) };
    }
    return out;
  }
}

export interface OpenedDatabase {
  db: Db;
  driver: 'sqlite' | 'postgres';
  /** The raw SQLite handle, for the few spots that need a synchronous transaction. */
  sqlite?: BetterSqlite3.Database;
  /**
   * SQLite: runs `fn` before `db` hands out its connection (a query, or a transaction's first) and waits for what it
   * returns, so writes queued elsewhere (the spend store's batches) land before anything reads.
   */
  beforeQuery?(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface DatabaseSettings {
  driver: 'sqlite' | 'postgres';
  /** SQLite file (already resolved against storage.dataDir). */
  path: string;
  /** PostgreSQL connection URL. */
  url?: string;
  /** PostgreSQL schema to use (created when missing); default the connection's search_path. */
  schema?: string;
  /** SQLite: how long the auth caches trust the change counter without a change signal (change-version.ts). */
  recheckMs?: number;
}

/** `shortLived`: a command that opens, writes a row and exits (the admin CLI) starts no checkpointer thread. */
export async function openDatabase(settings: DatabaseSettings, { shortLived = false } = {}): Promise<OpenedDatabase> {
  if (settings.driver === 'postgres') return openPostgres(settings.url!, settings.schema);
  return openSqlite(settings.path, { checkpointer: !shortLived, recheckMs: settings.recheckMs });
}

/** What runs around the connection's work: `beforeQuery` once the spend store exists, `committed` once opened. */
class ConnectionHooks {
  beforeQuery?: () => Promise<void> | void;
  /** After each statement that may have written, once nothing of it is left uncommitted. */
  committed?: () => void;
}

/** A statement that cannot write: kysely's select, or raw SQL that starts with `select`. */
const readsOnly = (query: CompiledQuery) => SelectQueryNode.is(query.query) || /^\s*select\b/i.test(query.sql);

/** `connection`, calling `hooks.committed` after each statement that may have written, outside a transaction (a commit). */
function reportingCommits(connection: DatabaseConnection, sqlite: BetterSqlite3.Database, hooks: ConnectionHooks): DatabaseConnection {
  return {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const result = await connection.executeQuery<R>(query);
      if (!readsOnly(query) && !sqlite.inTransaction) hooks.committed?.();
      return result;
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  };
}

/**
 * kysely's SQLite driver, waiting for `hooks.beforeQuery` each time it hands out its connection, telling
 * `hooks.committed` of each commit, and beginning each transaction IMMEDIATE: it takes the write lock first, waiting
 * (busy_timeout) while another process (a worker, the admin CLI) writes. A deferred one that read first fails with
 * SQLITE_BUSY when it then writes after another process did.
 */
class WaitingSqliteDriver extends SqliteDriver {
  private connection?: DatabaseConnection;

  constructor(
    private readonly config: SqliteDialectConfig & { database: BetterSqlite3.Database },
    private readonly hooks: ConnectionHooks,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.hooks.beforeQuery?.();
    const connection = await super.acquireConnection();
    // SQLite has one connection: wrapped once.
    return (this.connection ??= reportingCommits(connection, this.config.database, this.hooks));
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class WaitingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig & { database: BetterSqlite3.Database },
    private readonly hooks: ConnectionHooks,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new WaitingSqliteDriver(this.config, this.hooks);
  }
}

export async function openSqlite(path: string, { checkpointer: withCheckpointer = true, recheckMs }: { checkpointer?: boolean; recheckMs?: number } = {}): Promise<OpenedDatabase> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.defaultSafeIntegers(false);
  // A file's WAL is checkpointed by a thread of its own, never inside a commit on the event loop.
  const checkpointer = path === ':memory:' || !withCheckpointer ? undefined : startCheckpointer(path);
  if (checkpointer) sqlite.pragma('wal_autocheckpoint = 0');
  const hooks = new ConnectionHooks();
  const db = new Kysely<Database>({ dialect: new WaitingSqliteDialect({ database: sqlite }, hooks) });
  await migrate(db);
  const signal = watchAuthChanges(db, sqlite, { path, recheckMs }, hooks);
  const close = async () => {
    signal?.close();
    await checkpointer?.stop();
    await db.destroy();
  };
  return { db, driver: 'sqlite', sqlite, beforeQuery: (fn) => (hooks.beforeQuery = fn), close };
}

/**
 * The auth caches' change counter (change-version.ts), read again only when it may have moved: a commit of this process
 * that moved it touches the epoch file (change-signal.ts), and every process on the file, this one included, reads it
 * again on its next request. An in-memory database has no other process: its own commits are all there is to hear.
 */
function watchAuthChanges(db: Db, sqlite: BetterSqlite3.Database, { path, recheckMs }: { path: string; recheckMs?: number }, hooks: ConnectionHooks) {
  const authVersion = sqlite.prepare("select version from change_counters where name = 'auth'").pluck();
  const detector = registerChangeDetector(db, () => authVersion.get() as number, { recheckMs });
  const signal = path === ':memory:' ? undefined : watchChangeSignal(epochFileOf(path), () => detector.stale(), () => detector.unwatched());
  hooks.committed = () => {
    if (detector.moved()) signal?.announce();
  };
  return signal;
}

/**
 * PostgreSQL through `pg`. Counts and money are bigint columns: they are read as numbers (every value the gateway
 * stores stays below 2^53). No auth cache here: a key lookup is one indexed query, and every replica sees a
 * revocation on its next request.
 */
export async function openPostgres(url: string, schema?: string): Promise<OpenedDatabase> {
  const { default: pg } = await import('pg');
  const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? Number : pg.types.getTypeParser(oid, format as 'text')) };
  const pool = new pg.Pool({ connectionString: url, max: 10, types: types as never, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    // kysely looks for its own tables in every schema unless told which: name ours, or another schema's would do.
    const own = schema ?? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema;
    await migrateRacingOtherSchemas(db, own);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, driver: 'postgres', close: () => db.destroy() };
}

/**
 * Migrates `schema`, tried again (up to three times) when PostgreSQL says a schema, table or column is gone: kysely's
 * migrator reads the tables of every schema in the database, and another schema dropped or changed meanwhile (another
 * tenant, a test suite) fails that read. Migrations run in one transaction here, so a failed try leaves nothing behind.
 */
async function migrateRacingOtherSchemas(db: Db, schema: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrate(db, schema);
    } catch (err) {
      if (attempt === 3 || !/does not exist/.test((err as Error).message)) throw err;
    }
  }
}

/**
 * Applies pending migrations. `migrationTableSchema` names where kysely keeps its own tables: without it, kysely looks
 * for them in every schema of the database and, finding another schema's, never creates them in this one.
 */
export async function migrate(db: Db, migrationTableSchema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: new GlobMigrationProvider(), allowUnorderedMigrations: true, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? 'unknown error'}`);
}
