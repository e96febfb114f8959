// Small gateway-wide settings kept in the database (generated secrets, first-start markers).
import type { Db } from './database.js';

export async function getSetting(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/** Sets the value only if none is stored; returns whichever value is stored afterwards. */
export async function getOrInitSetting(db: Db, name: string, init: () => string): Promise<string> {
  await db.insertInto('settings').values({ name, value: init() }).onConflict((oc) => oc.column('name').doNothing()).execute();
  return (await getSetting(db, name))!;
}
