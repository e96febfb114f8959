// The one place code asks which engine it runs on, for the few statements SQL does not share (identity columns,
// triggers in migrations; a row lock).
import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * By class, or by its name: a migration the admin CLI's bundle runs imports kysely from node_modules, a second copy of
 * the class the bundle's own database was made with (the bundle keeps class names).
 */
export const isPostgres = (db: Kysely<unknown>) => {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof PostgresAdapter || adapter.constructor.name === 'PostgresAdapter';
};
