// The one place code asks which engine it runs on, for the few statements SQL does not share (identity columns,
// triggers in migrations; a row lock).
import { PostgresAdapter, type Kysely } from 'kysely';

export const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;
