// Usage and the audit log in the admin service: a workspace's usage report, the log a page at a time, and rows for
// changes made elsewhere (a config reload, a file deleted from the dashboard).
import { usageReport, usageTotals, type UsageRange } from '../billing/usage-report.js';
import { ValidationError } from '../base/errors.js';
import { appendAudit, listAudit } from '../store/audit.js';
import type { AdminScope } from './scope.js';
import { auditView, type AuditView } from './views.js';
import { listRequestLogs } from '../request-logs/repository.js';
import { requestLogView, type RequestLogView } from '../request-logs/views.js';
import { parseRequestLogQuery, requestLogCsv, type RequestLogQuery } from './request-log-query.js';

export async function usage(admin: AdminScope, workspaceId: string, range: UsageRange) {
  const workspace = await admin.workspace(workspaceId);
  const data = await usageReport(admin.db, workspace.id, range);
  return { workspace_id: workspace.id, data, totals: usageTotals(data) };
}

export interface AuditQuery {
  workspace_id?: string;
  before?: string;
  limit?: number;
}

export async function audit(admin: AdminScope, query: AuditQuery): Promise<{ data: AuditView[]; has_more: boolean }> {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new ValidationError('limit must be an integer from 1 to 500', 'limit');
  if (query.before !== undefined && !/^aud_[0-9a-f]{28}$/.test(query.before)) throw new ValidationError('before must be an audit row id', 'before');
  let workspaceIds: string[] | undefined;
  if (query.workspace_id !== undefined) workspaceIds = [(await admin.workspace(query.workspace_id)).id];
  else if (admin.reach !== 'all') workspaceIds = [...admin.reach];
  const rows = await listAudit(admin.db, { workspaceIds, before: query.before, limit: limit + 1 });
  return { data: rows.slice(0, limit).map(auditView), has_more: rows.length > limit };
}

/** Records a change made elsewhere in its own row. */
export async function record(admin: AdminScope, action: string, workspaceId: string | null, targetId: string | null, before?: unknown, after?: unknown): Promise<void> {
  await appendAudit(admin.db, admin.actor, { action, workspaceId, targetId, before, after }, admin.now());
}

/** A workspace's request log, newest first, a page at a time (src/request-logs/). */
/** Every row the query's filters match, from its cursor on, as CSV lines (its limit is the size of a read, not of the export). */
export async function requestsCsv(admin: AdminScope, workspaceId: string, query: RequestLogQuery): Promise<AsyncGenerator<string>> {
  const workspace = await admin.workspace(workspaceId);
  return requestLogCsv(admin.db, parseRequestLogQuery(workspace.id, query));
}

export async function requests(admin: AdminScope, workspaceId: string, query: RequestLogQuery): Promise<{ data: RequestLogView[]; next_cursor: string | null }> {
  const workspace = await admin.workspace(workspaceId);
  const filter = parseRequestLogQuery(workspace.id, query);
  const page = await listRequestLogs(admin.db, filter);
  const data = page.rows.map(requestLogView);
  return { data, next_cursor: page.hasMore && data.length ? data[data.length - 1].id : null };
}
