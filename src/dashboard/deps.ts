// What the dashboard's pages use, named apart from the code that assembles the gateway: the file store (rows, bytes,
// signed links), the current config and the MCP servers' connections.
import type { BudgetCalendar } from '../config/periods.js';
import type { FileStore, ServerConfig } from '../files/file-store.js';
import type { McpGatewayDeps } from '../mcp/request.js';

export interface DashboardDeps extends FileStore, ServerConfig {
  /** Where budget periods begin and end (billing.timeZone). */
  calendar: BudgetCalendar;
  /** Commits the request-log rows this process has queued, before a page reads them. */
  readonly requestLogs: { commitQueued(): Promise<void> };
  /** The MCP servers' connections: Settings > MCP tools lists each server's tools through them. */
  readonly mcp: Pick<McpGatewayDeps, 'upstreams'>;
}
