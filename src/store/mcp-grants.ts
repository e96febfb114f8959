// The mcp_grants table (migration 023): a workspace's or a key's tools on one MCP server, set through the admin API.
import type { Kysely } from 'kysely';
import type { McpGrantScope } from './mcp-grant-table.js';
import type { Database } from './schema.js';

export type { McpGrantScope };

export interface StoredMcpGrant {
  server: string;
  tools: string[];
}

/** The grants of a workspace and of a key, in one query. */
export async function grantsOf(db: Kysely<Database>, workspaceId: string, keyId: string): Promise<{ workspace: StoredMcpGrant[]; key: StoredMcpGrant[] }> {
  const rows = await db
    .selectFrom('mcp_grants')
    .select(['scope', 'server', 'tools'])
    .where((eb) => eb.or([eb.and([eb('scope', '=', 'workspace'), eb('subject_id', '=', workspaceId)]), eb.and([eb('scope', '=', 'key'), eb('subject_id', '=', keyId)])]))
    .execute();
  const of = (scope: McpGrantScope) => rows.filter((r) => r.scope === scope).map((r) => ({ server: r.server, tools: JSON.parse(r.tools) as string[] }));
  return { workspace: of('workspace'), key: of('key') };
}

export async function listGrants(db: Kysely<Database>, scope: McpGrantScope, subjectId: string): Promise<StoredMcpGrant[]> {
  const rows = await db.selectFrom('mcp_grants').select(['server', 'tools']).where('scope', '=', scope).where('subject_id', '=', subjectId).orderBy('server').execute();
  return rows.map((r) => ({ server: r.server, tools: JSON.parse(r.tools) as string[] }));
}

/** Sets one grant (tools null removes it); the grant before, or undefined. */
export async function writeGrant(db: Kysely<Database>, scope: McpGrantScope, subjectId: string, server: string, tools: string[] | null, now: number): Promise<StoredMcpGrant | undefined> {
  const found = await db.selectFrom('mcp_grants').select(['tools']).where('scope', '=', scope).where('subject_id', '=', subjectId).where('server', '=', server).executeTakeFirst();
  const before = found && { server, tools: JSON.parse(found.tools) as string[] };
  const where = db.deleteFrom('mcp_grants').where('scope', '=', scope).where('subject_id', '=', subjectId).where('server', '=', server);
  await where.execute();
  if (tools) await db.insertInto('mcp_grants').values({ scope, subject_id: subjectId, server, tools: JSON.stringify(tools), updated_at: Math.floor(now / 1000) }).execute();
  return before;
}

/** The grants the keys of a workspace have of their own, each with its key's id. */
export async function keyGrantsInWorkspace(db: Kysely<Database>, workspaceId: string): Promise<(StoredMcpGrant & { keyId: string })[]> {
  const rows = await db
    .selectFrom('mcp_grants')
    .innerJoin('api_keys', 'api_keys.id', 'mcp_grants.subject_id')
    .select(['mcp_grants.subject_id', 'mcp_grants.server', 'mcp_grants.tools'])
    .where('mcp_grants.scope', '=', 'key')
    .where('api_keys.workspace_id', '=', workspaceId)
    .orderBy('mcp_grants.server')
    .execute();
  return rows.map((r) => ({ keyId: r.subject_id, server: r.server, tools: JSON.parse(r.tools) as string[] }));
}
