// The mcp_grants table's row (migration 023), apart from schema.ts so the table's reader imports one way.
/** A grant's subject: a workspace or one key. */
export type McpGrantScope = 'workspace' | 'key';

export interface McpGrantsTable {
  scope: McpGrantScope;
  subject_id: string;
  server: string;
  /** JSON array of tool names or `*` patterns. */
  tools: string;
  updated_at: number;
}
