// Logs: the workspace's request log, newest first, a page at a time, filtered by status, model, key, route, guardrail verdict and time; a
// row's detail (its captured bodies when capture was on); a CSV export of the filtered rows. Owners and admins, and
// members unless requestLogs.membersSee is false; only the workspace the page acts on.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, ValidationError } from '../../base/errors.js';
import { readBodies } from '../../request-logs/bodies.js';
import { requestLogsConfig } from '../../request-logs/config.js';
import { findRequestLog, listRequestLogs } from '../../request-logs/repository.js';
import { requestLogView, type RequestLogView } from '../../request-logs/views.js';
import { parseRequestLogQuery, requestLogCsv, type RequestLogQuery } from '../../admin/request-log-query.js';
import type { DashboardDeps } from '../deps.js';
import { MANAGERS, RoleError, requireUser } from '../session.js';

const PAGE = 50;
const filterNames = ['status', 'model', 'key', 'route', 'guardrail', 'since', 'until'] as const;

type LogsQuery = Partial<Record<(typeof filterNames)[number] | 'cursor', string>>;

/** The filters as the form sent them (strings only; anything else is dropped). */
function filtersOf(req: FastifyRequest): LogsQuery {
  const raw = req.query as Record<string, unknown>;
  const out: LogsQuery = {};
  for (const name of [...filterNames, 'cursor'] as const) if (typeof raw[name] === 'string' && (raw[name] as string).length <= 128) out[name] = raw[name] as string;
  return out;
}

const asQuery = (f: LogsQuery, limit: number): RequestLogQuery => ({ status: f.status, model: f.model, key_id: f.key, route: f.route, guardrail: f.guardrail, since: f.since, until: f.until, cursor: f.cursor, limit });

/** The page's own link with these filters (and a cursor). */
function linkTo(path: string, f: LogsQuery, cursor?: string): string {
  const params = new URLSearchParams();
  for (const name of filterNames) if (f[name]) params.set(name, f[name]!);
  if (cursor) params.set('cursor', cursor);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

const shown = (v: RequestLogView) => ({
  ...v,
  at: v.created_at.replace('T', ' ').slice(0, 19) + ' UTC',
  outcome: v.status < 400 ? 'success' : 'error',
  costText: `${v.cost} ${v.currency}`,
  keyText: v.key_name ?? v.key_id,
});

export function registerLogsRoutes(app: FastifyInstance, services: DashboardDeps): void {
  // Members see the page unless the config says otherwise (read at each request: a reload applies at once).
  const allowed = async (req: FastifyRequest) => {
    const role = req.dashboard!.workspace.role;
    if (!requestLogsConfig(services.config).membersSee && !MANAGERS.includes(role)) throw new RoleError(MANAGERS);
    // What this process holds for its next batch is committed first, so the page shows every answered request.
    await services.requestLogs.commitQueued();
  };
  const guard = { preHandler: [requireUser(services), allowed] };

  app.get('/logs', guard, async (req, reply) => renderList(services, req, reply));
  app.get('/logs.csv', guard, async (req, reply) => exportCsv(services, req, reply));
  app.get('/logs/:id', guard, async (req, reply) => {
    const ctx = req.dashboard!;
    const id = (req.params as { id: string }).id;
    const row = /^log_[0-9a-f]{28}$/.test(id) ? await findRequestLog(services.db, ctx.workspace.workspaceId, id) : undefined;
    if (!row) throw new NotFoundError('no such request in this workspace', 'request_log_not_found');
    const bodies = await readBodies(services.blobs, row.body_key);
    return reply.view('log', { title: `Request ${row.request_id}`, page: 'logs', dashboard: ctx, r: shown(requestLogView(row)), bodies, captured: row.body_key !== null });
  });
}

async function renderList(services: DashboardDeps, req: FastifyRequest, reply: FastifyReply) {
  const ctx = req.dashboard!;
  const workspaceId = ctx.workspace.workspaceId;
  const f = filtersOf(req);
  let error = '';
  let rows: ReturnType<typeof shown>[] = [];
  let nextUrl = '';
  try {
    const page = await listRequestLogs(services.db, parseRequestLogQuery(workspaceId, asQuery(f, PAGE)));
    rows = page.rows.map((r) => shown(requestLogView(r)));
    if (page.hasMore && rows.length) nextUrl = linkTo('/dashboard/logs', f, rows[rows.length - 1].id);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    error = err.message;
  }
  const keys = await services.db.selectFrom('api_keys').select(['id', 'name', 'prefix']).where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
  return reply.view('logs', {
    title: 'Logs',
    page: 'logs',
    dashboard: ctx,
    rows,
    f,
    error,
    keys: keys.map((k) => ({ id: k.id, label: k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…` })),
    nextUrl,
    firstUrl: f.cursor ? linkTo('/dashboard/logs', f) : '',
    csvUrl: linkTo('/dashboard/logs.csv', f),
  });
}

/** The filtered rows as CSV, every page of them (up to CSV_MAX_ROWS), streamed as they are read. */
async function exportCsv(services: DashboardDeps, req: FastifyRequest, reply: FastifyReply) {
  const filter = parseRequestLogQuery(req.dashboard!.workspace.workspaceId, asQuery({ ...filtersOf(req), cursor: undefined }, 500));
  const { Readable } = await import('node:stream');
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="requests-${new Date().toISOString().slice(0, 10)}.csv"`)
    .send(Readable.from(requestLogCsv(services.db, filter)));
}
