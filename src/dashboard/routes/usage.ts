// The Usage page: cost and tokens per day for the last 30 days, tables by model and by key, and spend in the current periods.
import type { FastifyInstance } from 'fastify';
import { spendInPeriod } from '../../billing/budgets.js';
import type { BudgetCalendar } from '../../config/periods.js';
import { formatMoney } from '../../billing/spend-caps.js';
import type { Db } from '../../store/database.js';
import type { DashboardDeps } from '../deps.js';
import { findWorkspaceById } from '../../store/workspaces.js';
import { requireUser } from '../session.js';
import { usageOverview } from '../usage-chart.js';

const periodNames = [['daily', 'today'], ['weekly', 'this week'], ['monthly', 'this month']] as const;

/** What the workspace spent today, this week and this month (in billing.timeZone), and its cap with its period. */
async function currentPeriods(db: Db, calendar: BudgetCalendar, workspaceId: string, now = Date.now()) {
  const periods = [];
  for (const [period, label] of periodNames) {
    const spent = await spendInPeriod(db, calendar, 'workspace', workspaceId, { period, at: now });
    periods.push({ label, spent: `$${formatMoney(spent.spentMicros)}` });
  }
  const workspace = await findWorkspaceById(db, workspaceId);
  const cap = workspace?.spend_cap_micros ?? null;
  const capText = cap === null ? 'none' : `$${formatMoney(cap)}${workspace!.spend_cap_period === 'total' ? ' in total' : ` ${workspace!.spend_cap_period}`}`;
  return { periods, cap: capText, timeZone: calendar.timeZone };
}

export function registerUsageRoutes(app: FastifyInstance, services: DashboardDeps): void {
  app.get('/usage', { preHandler: requireUser(services) }, async (req, reply) => {
    const ctx = req.dashboard!;
    const workspaceId = ctx.workspace.workspaceId;
    return reply.view('usage', { title: 'Usage', page: 'usage', dashboard: ctx, usage: await usageOverview(services.db, workspaceId), budget: await currentPeriods(services.db, services.calendar, workspaceId) });
  });
}
