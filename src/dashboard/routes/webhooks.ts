// Settings > Webhooks: the workspace's task-event endpoints; add one (its signing secret shown once) or delete one.
// Owners and admins only; every change goes through the admin service and writes its audit row.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../base/errors.js';
import { WebhookAdmin } from '../../admin/webhooks.js';
import { eventTypesOfEndpoints } from '../../webhooks/events.js';
import type { DashboardDeps } from '../deps.js';
import { keptForm } from '../form-values.js';
import { dashboardAdmin, MANAGERS, requireUser } from '../session.js';

type Form = Record<string, unknown>;

/** The form's ticked events: none ticked means every event. */
function eventsOf(value: unknown): string[] | undefined {
  const ticked = (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);
  return ticked.length ? ticked : undefined;
}

export function registerWebhooksRoutes(app: FastifyInstance, services: DashboardDeps): void {
  const managers = requireUser(services, MANAGERS);
  const hooks = (req: FastifyRequest) => new WebhookAdmin(dashboardAdmin(services, req), (services.config.gateway.network as { allowHosts: string[] }).allowHosts, () => eventTypesOfEndpoints(services.config.endpoints));

  async function page(req: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) {
    const ctx = req.dashboard!;
    const endpoints = await hooks(req).list(ctx.workspace.workspaceId);
    return reply.view('webhooks', { title: 'Webhooks', page: 'webhooks', dashboard: ctx, endpoints, eventTypes: eventTypesOfEndpoints(services.config.endpoints), ...extra });
  }

  app.get('/settings/webhooks', { preHandler: managers }, async (req, reply) => page(req, reply));

  app.post('/settings/webhooks', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const form = (req.body ?? {}) as Form;
    try {
      const created = await hooks(req).create(req.dashboard!.workspace.workspaceId, { url: typeof form.url === 'string' ? form.url.trim() : undefined, events: eventsOf(form.events) });
      req.log.info({ webhookId: created.id, userId: req.dashboard!.user.id }, 'dashboard: webhook endpoint added');
      return await page(req, reply.code(201), { created });
    } catch (err) {
      if (err instanceof ValidationError) return page(req, reply.code(400), { formError: err.message, form: keptForm(form, ['url', 'events']) });
      throw err;
    }
  });

  app.post('/settings/webhooks/:id/delete', { preHandler: [app.csrfProtection, managers] }, async (req, reply) => {
    const { id } = req.params as { id: string };
    await hooks(req).delete(id);
    req.log.info({ webhookId: id, userId: req.dashboard!.user.id }, 'dashboard: webhook endpoint deleted');
    // htmx swaps the row out; a plain form post goes back to the list.
    if (req.headers['hx-request'] === 'true') return reply.type('text/html').send('');
    return reply.redirect('/dashboard/settings/webhooks', 303);
  });
}
