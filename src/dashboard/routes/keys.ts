// Settings > API Keys: list, create (shown once), revoke, change the cap and its period. Owners and admins only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SCOPES } from '../../auth/scopes.js';
import { NotFoundError, ValidationError } from '../../base/errors.js';
import type { DashboardDeps } from '../deps.js';
import { keptForm } from '../form-values.js';
import { EXPIRY_CHOICES, PERIOD_CHOICES, parseCap, parseCapPeriod, parseExpiryDays, parseKeyName, parseScopes, workspaceKey, workspaceKeyView, workspaceKeyViews } from '../keys.js';
import { dashboardAdmin, MANAGERS, requireUser } from '../session.js';

const keyNotFound = () => new NotFoundError('no such key in this workspace', 'key_not_found');
type Form = Record<string, unknown>;
/** The create form's fields, shown again when it is refused. */
const KEY_FORM_FIELDS = ['name', 'scopes', 'expires', 'cap', 'period'] as const;

export function registerKeysRoutes(app: FastifyInstance, services: DashboardDeps): void {
  const managers = requireUser(services, MANAGERS);
  const { db, calendar } = services;

  async function page(req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) {
    const ctx = req.dashboard!;
    return reply.view('keys', { title: 'API keys', page: 'keys', dashboard: ctx, keys: await workspaceKeyViews(db, calendar, ctx.workspace.workspaceId), scopes: SCOPES, expiryChoices: EXPIRY_CHOICES, periodChoices: PERIOD_CHOICES, ...extra });
  }

  /** An htmx action answers with the key's new row; a plain form post goes back to the list. */
  async function rowOrRedirect(req: FastifyRequest, reply: FastifyReply, id: string) {
    if (req.headers['hx-request'] !== 'true') return reply.redirect('/dashboard/settings/keys', 303);
    const key = await workspaceKeyView(db, calendar, req.dashboard!.workspace.workspaceId, id);
    return reply.view('key-row', { key, csrfToken: req.dashboard!.csrfToken, periodChoices: PERIOD_CHOICES });
  }

  app.get('/settings/keys', { preHandler: managers }, async (req, reply) => page(req, reply));

  app.post('/settings/keys', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const body = (req.body ?? {}) as Form;
    try {
      const scopes = parseScopes(body.scopes);
      const days = parseExpiryDays(body.expires);
      const spendCapMicros = parseCap(body.cap);
      const spendCapPeriod = parseCapPeriod(body.period);
      const name = parseKeyName(body.name);
      const expiresAt = days === null ? null : Math.floor(Date.now() / 1000) + days * 86_400;
      const issued = await dashboardAdmin(services, req).createKey(req.dashboard!.workspace.workspaceId, { scopes, expires_at: expiresAt, spend_cap: spendCapMicros === null ? null : spendCapMicros / 1e6, spend_cap_period: spendCapPeriod, name });
      req.log.info({ keyId: issued.id, userId: req.dashboard!.user.id }, 'dashboard: API key created');
      return await page(req, reply.code(201), { created: { id: issued.id, key: issued.key } });
    } catch (err) {
      if (err instanceof ValidationError) return page(req, reply.code(400), { formError: err.message, form: keptForm(body, KEY_FORM_FIELDS) });
      throw err;
    }
  });

  app.post('/settings/keys/:id/revoke', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!(await workspaceKey(db, req.dashboard!.workspace.workspaceId, id))) throw keyNotFound();
    await dashboardAdmin(services, req).revokeKey(id);
    req.log.info({ keyId: id, userId: req.dashboard!.user.id }, 'dashboard: API key revoked');
    return rowOrRedirect(req, reply, id);
  });

  app.post('/settings/keys/:id/cap', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!(await workspaceKey(db, req.dashboard!.workspace.workspaceId, id))) throw keyNotFound();
    const form = req.body as Form | undefined;
    const cap = parseCap(form?.cap, true);
    await dashboardAdmin(services, req).updateKey(id, { spend_cap: cap === null ? null : cap / 1e6, spend_cap_period: parseCapPeriod(form?.period) });
    req.log.info({ keyId: id, userId: req.dashboard!.user.id }, 'dashboard: API key cap changed');
    return rowOrRedirect(req, reply, id);
  });
}
