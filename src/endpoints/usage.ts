// GET /v1/usage: the calling key's workspace usage, grouped by day, model and key, optionally between since and until.
import { parseUsageRange, usageReport, usageTotals } from '../billing/usage-report.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (req) => {
  const query = (req.query ?? {}) as Record<string, unknown>;
  const range = parseUsageRange(query.since, query.until);
  const data = await usageReport(services.db, req.auth!.workspaceId, range);
  return {
    object: 'usage',
    workspace_id: req.auth!.workspaceId,
    since: range.since ?? null,
    until: range.until ?? null,
    data,
    totals: usageTotals(data),
  };
};

export default create;
