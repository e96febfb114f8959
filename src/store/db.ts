// The metadata database's query builder type, apart from the code that opens it (so its users need not import that).
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
