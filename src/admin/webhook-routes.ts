// The admin API's webhook routes (/admin/v1/workspaces/{id}/webhooks, /admin/v1/webhooks/{id}...), thin over WebhookAdmin,
// bodies and queries checked against the schemas the OpenAPI document publishes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminDeps } from './deps.js';
import { webhooksOptions } from '../webhooks/options.js';
import { WebhookAdmin, type EndpointInput } from './webhooks.js';
import { webhookRequestSchemas } from './webhooks-openapi.js';
import { eventTypesOfEndpoints } from '../webhooks/events.js';

/** Makes a checker from a schema: `bodies` for request bodies, `queries` for query strings (coerced, with defaults). */
export interface SchemaCheckers {
  bodies(schema: object): (value: unknown) => void;
  queries(schema: object): (value: unknown) => void;
}

type Params = Record<string, string>;

/** The webhook service as this request's caller may use it, with the current network exceptions. */
export function webhookAdminFor(services: Pick<AdminDeps, 'config'>, req: FastifyRequest): WebhookAdmin {
  return new WebhookAdmin(req.admin!, (services.config.gateway.network as { allowHosts: string[] }).allowHosts, () => eventTypesOfEndpoints(services.config.endpoints));
}

export function registerWebhookRoutes(api: FastifyInstance, services: Pick<AdminDeps, 'config'>, checkers: SchemaCheckers): void {
  const check = {
    create: checkers.bodies(webhookRequestSchemas.createWebhook),
    update: checkers.bodies(webhookRequestSchemas.updateWebhook),
    deliveries: checkers.queries(webhookRequestSchemas.deliveriesQuery),
  };
  const hooks = (req: FastifyRequest) => webhookAdminFor(services, req);

  api.get('/workspaces/:workspace_id/webhooks', async (req) => ({ data: await hooks(req).list((req.params as Params).workspace_id) }));
  api.post('/workspaces/:workspace_id/webhooks', async (req, reply) => {
    check.create(req.body);
    return reply.code(201).send(await hooks(req).create((req.params as Params).workspace_id, req.body as EndpointInput));
  });
  api.get('/webhooks/:webhook_id', async (req) => hooks(req).get((req.params as Params).webhook_id));
  api.patch('/webhooks/:webhook_id', async (req) => {
    check.update(req.body);
    return hooks(req).update((req.params as Params).webhook_id, req.body as EndpointInput);
  });
  api.delete('/webhooks/:webhook_id', async (req, reply) => {
    await hooks(req).delete((req.params as Params).webhook_id);
    return reply.code(204).send();
  });
  api.post('/webhooks/:webhook_id/rotate-secret', async (req) => hooks(req).rotate((req.params as Params).webhook_id, webhooksOptions(services.config).rotationGraceMs));
  api.get('/webhooks/:webhook_id/deliveries', async (req) => {
    const query = { ...(req.query as object) } as { before?: string; limit?: number };
    check.deliveries(query);
    return hooks(req).deliveries((req.params as Params).webhook_id, query);
  });
}
