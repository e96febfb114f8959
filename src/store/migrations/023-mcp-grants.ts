// Tool grants of the MCP gateway made through the admin API: which tools of which MCP server a workspace, or one key,
// may list and call (docs/mcp.md). The config file's `mcp.grants` add to a workspace's; a key's own narrow its workspace's.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mcp_grants')
    // "workspace" or "key".
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    // The MCP server's id (mcp/*.yaml).
    .addColumn('server', 'text', (c) => c.notNull())
    // JSON array of tool names or `*` patterns.
    .addColumn('tools', 'text', (c) => c.notNull())
    // Unix seconds.
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_grants_pk', ['scope', 'subject_id', 'server'])
    .execute();
}
