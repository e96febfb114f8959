// The one place a migration asks which engine it runs on, for the few statements SQL does not share (identity columns, triggers).
import { PostgresAdapter, type Kysely } from 'kysely';

export const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;
