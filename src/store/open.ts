// Opens the database the config names: SQLite under storage.dataDir, or PostgreSQL at storage.database.url or DATABASE_URL.
import type { CheckedConfig } from '../config/types.js';
import { dataPathFor } from '../config/locate.js';
import { openDatabase, type OpenedDatabase } from './database.js';

export function openConfiguredDatabase(config: Pick<CheckedConfig, 'baseDir' | 'gateway'>, env: NodeJS.ProcessEnv = process.env, options: { shortLived?: boolean } = {}): Promise<OpenedDatabase> {
  const { driver, path, url, schema, recheckSeconds } = config.gateway.storage.database;
  return openDatabase({ driver, path: dataPathFor(config)(path), url: url || env.DATABASE_URL, schema, recheckMs: recheckSeconds * 1000 }, options);
}
