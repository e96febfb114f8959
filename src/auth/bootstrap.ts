// First start with an empty database: create workspace "default" and one all-scope key, shown once in the log.
import type { Db } from '../store/database.js';
import { countWorkspaces, createWorkspace } from '../store/workspaces.js';
import { issueApiKey, type IssuedKey } from './keys.js';

export async function bootstrapDefaultWorkspace(db: Db): Promise<IssuedKey | undefined> {
  if ((await countWorkspaces(db)) > 0) return undefined;
  const workspace = await createWorkspace(db, 'default');
  return issueApiKey(db, workspace, { name: 'bootstrap' });
}
