// The admin REST API under /admin/v1: thin routes over AdminService, their bodies and queries checked against the
// schemas the OpenAPI document publishes. JSON errors in the OpenAI envelope, like the rest of the gateway.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import secureSession from '@fastify/secure-session';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseUsageRange } from '../billing/usage-report.js';
import { summarize } from '../config/load.js';
import { ConfigError, ValidationError } from '../base/errors.js';
import { schemaError } from '../http/schema-error.js';
import type { AdminDeps } from './deps.js';
import { createPasswordLink, passwordLinkUrl, USER_LINK_SECONDS } from '../auth/password-links.js';
import { SESSION_COOKIE, sessionKey } from '../auth/session.js';
import { adminFor } from './auth.js';
import { applyReload } from '../compile/reload.js';
import { reloadOtherWorkers } from '../base/cluster-ipc.js';
import { registerWebhookRoutes } from './webhook-routes.js';
import { openApiDocument, requestSchemas } from './openapi.js';
import { ForbiddenError, type AdminService, type ModelCapInput } from './service.js';
import type { RequestLogQuery } from './request-log-query.js';
import type { McpGrantInput } from './mcp-grants-service.js';
import type { CacheSettings } from '../config/cache.js';

const ajvOptions = { strict: true, strictTypes: false, allowUnionTypes: true, allErrors: false } as const;
const bodies = new Ajv(ajvOptions);
const queries = new Ajv({ ...ajvOptions, coerceTypes: true, useDefaults: true });

function checker(ajv: Ajv, schema: object): (value: unknown) => void {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (validate(value ?? {})) return;
    const first = validate.errors![0];
    // An unknown field is named as the param, like any other bad field.
    if (first.keyword === 'additionalProperties') throw new ValidationError(schemaError(first).message, `${first.instancePath.slice(1).replace(/\//g, '.')}${first.instancePath ? '.' : ''}${first.params.additionalProperty}`.slice(0, 128));
    throw schemaError(first);
  };
}

const check = {
  createWorkspace: checker(bodies, requestSchemas.createWorkspace),
  updateWorkspace: checker(bodies, requestSchemas.updateWorkspace),
  createKey: checker(bodies, requestSchemas.createKey),
  updateKey: checker(bodies, requestSchemas.updateKey),
  setMember: checker(bodies, requestSchemas.setMember),
  setModelCap: checker(bodies, requestSchemas.setModelCap),
  setMcpGrant: checker(bodies, requestSchemas.setMcpGrant),
  setGuardrails: checker(bodies, requestSchemas.setGuardrails),
  setCacheSettings: checker(bodies, requestSchemas.setCacheSettings),
  usageQuery: checker(queries, requestSchemas.usageQuery),
  auditQuery: checker(queries, requestSchemas.auditQuery),
  requestsQuery: checker(queries, requestSchemas.requestsQuery),
};

type Params = Record<string, string>;
type Body = Record<string, never>;

/** The public address a password link points at. */
function baseUrl(services: AdminDeps, req: FastifyRequest): string {
  return services.config.gateway.server.publicUrl || `${req.protocol}://${req.host}`;
}

/** "METHOD /path" of every admin route registered (OpenAPI paths spell parameters as {name}), for the document's test. */
export const adminRoutes = new Set<string>();

export async function registerAdminApi(app: FastifyInstance, services: AdminDeps): Promise<void> {
  await app.register(
    async (api) => {
      await guard(api, services);
      api.get('/openapi.json', async () => openApiDocument);
      workspaceRoutes(api);
      keyRoutes(api);
      modelCapRoutes(api);
      mcpGrantRoutes(api);
      guardrailRoutes(api);
      cacheSettingsRoutes(api);
      memberRoutes(api, services);
      reportRoutes(api, services);
      registerWebhookRoutes(api, services, { bodies: (schema) => checker(bodies, schema), queries: (schema) => checker(queries, schema) });
    },
    { prefix: '/admin/v1' },
  );
}

/** Session cookie, caller check before the body is read, no caching, and the record of every route for the document's test. */
async function guard(api: FastifyInstance, services: AdminDeps): Promise<void> {
  // The dashboard's session cookie, read here too, so an owner signed in to the dashboard can use the API.
  await api.register(secureSession, { key: await sessionKey(services.db), cookieName: SESSION_COOKIE, cookie: { path: '/', httpOnly: true, sameSite: 'strict' } });
  api.decorateRequest('admin', undefined);
  api.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') adminRoutes.add(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`);
  });
  // Who calls is settled before the body is read.
  api.addHook('onRequest', async (req) => {
    if (req.routeOptions.url === '/admin/v1/openapi.json') return;
    req.admin = await adminFor(services, req);
  });
  api.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
  });
}

const admin = (req: FastifyRequest) => req.admin!;
const param = (req: FastifyRequest, name: string) => (req.params as Params)[name];

function workspaceRoutes(api: FastifyInstance): void {
  api.get('/workspaces', async (req) => ({ data: await admin(req).listWorkspaces() }));
  api.post('/workspaces', async (req, reply) => {
    check.createWorkspace(req.body);
    return reply.code(201).send(await admin(req).createWorkspace(req.body as { name: string }));
  });
  api.get('/workspaces/:workspace_id', async (req) => admin(req).getWorkspace(param(req, 'workspace_id')));
  api.patch('/workspaces/:workspace_id', async (req) => {
    check.updateWorkspace(req.body);
    return admin(req).updateWorkspace(param(req, 'workspace_id'), req.body as Body);
  });
}

function keyRoutes(api: FastifyInstance): void {
  api.get('/workspaces/:workspace_id/keys', async (req) => ({ data: await admin(req).listKeys(param(req, 'workspace_id')) }));
  api.post('/workspaces/:workspace_id/keys', async (req, reply) => {
    check.createKey(req.body);
    return reply.code(201).send(await admin(req).createKey(param(req, 'workspace_id'), (req.body ?? {}) as Body));
  });
  api.get('/keys/:key_id', async (req) => admin(req).getKey(param(req, 'key_id')));
  api.patch('/keys/:key_id', async (req) => {
    check.updateKey(req.body);
    return admin(req).updateKey(param(req, 'key_id'), req.body as Body);
  });
  api.delete('/keys/:key_id', async (req) => admin(req).revokeKey(param(req, 'key_id')));
}

/** A key's or a workspace's caps on single models: list, and set or remove one (PUT with spend_cap null). */
function modelCapRoutes(api: FastifyInstance): void {
  for (const [scope, path, id] of [['key', '/keys/:key_id/model_caps', 'key_id'], ['workspace', '/workspaces/:workspace_id/model_caps', 'workspace_id']] as const) {
    api.get(path, async (req) => ({ data: await admin(req).listModelCaps(scope, param(req, id)) }));
    api.put(path, async (req) => {
      check.setModelCap(req.body);
      return admin(req).setModelCap(scope, param(req, id), req.body as ModelCapInput);
    });
  }
}

/** A workspace's or a key's tools on MCP servers: list, and set or remove one server's (PUT with tools null). */
function mcpGrantRoutes(api: FastifyInstance): void {
  for (const [scope, path, id] of [['key', '/keys/:key_id/mcp_grants', 'key_id'], ['workspace', '/workspaces/:workspace_id/mcp_grants', 'workspace_id']] as const) {
    api.get(path, async (req) => ({ data: await admin(req).listMcpGrants(scope, param(req, id)) }));
    api.put(path, async (req) => {
      check.setMcpGrant(req.body);
      return admin(req).setMcpGrant(scope, param(req, id), req.body as McpGrantInput);
    });
  }
}

/** The guardrails a workspace or a key adds to the operator's: read, and set (docs/guardrails.md). */
function guardrailRoutes(api: FastifyInstance): void {
  for (const [scope, path, id] of [['key', '/keys/:key_id/guardrails', 'key_id'], ['workspace', '/workspaces/:workspace_id/guardrails', 'workspace_id']] as const) {
    api.get(path, async (req) => admin(req).getGuardrails(scope, param(req, id)));
    api.put(path, async (req) => {
      check.setGuardrails(req.body);
      return admin(req).setGuardrails(scope, param(req, id), (req.body as { guardrails: string[] }).guardrails);
    });
  }
}

/** How a workspace or a key narrows the response cache: read, and set (docs/caching.md). */
function cacheSettingsRoutes(api: FastifyInstance): void {
  for (const [scope, path, id] of [['key', '/keys/:key_id/cache', 'key_id'], ['workspace', '/workspaces/:workspace_id/cache', 'workspace_id']] as const) {
    api.get(path, async (req) => admin(req).getCacheSettings(scope, param(req, id)));
    api.put(path, async (req) => {
      check.setCacheSettings(req.body);
      return admin(req).setCacheSettings(scope, param(req, id), req.body as Partial<CacheSettings>);
    });
  }
}

function memberRoutes(api: FastifyInstance, services: AdminDeps): void {
  api.get('/workspaces/:workspace_id/users', async (req) => ({ data: await admin(req).listMembers(param(req, 'workspace_id')) }));
  api.put('/workspaces/:workspace_id/users', async (req, reply) => {
    check.setMember(req.body);
    const { created, ...member } = await admin(req).setRole(param(req, 'workspace_id'), req.body as { email: string; role: string });
    if (!created) return member;
    const token = await createPasswordLink(services.db, { userId: member.user_id }, USER_LINK_SECONDS);
    return reply.code(201).send({ ...member, password_link: passwordLinkUrl(baseUrl(services, req), token) });
  });
  api.delete('/workspaces/:workspace_id/users/:user_id', async (req, reply) => {
    await admin(req).removeMember(param(req, 'workspace_id'), param(req, 'user_id'));
    return reply.code(204).send();
  });
}

/** Whether the caller asks for CSV (`Accept: text/csv`) rather than JSON. */
const acceptsCsv = (accept: string | undefined) => typeof accept === 'string' && /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept.slice(0, 1024));

function reportRoutes(api: FastifyInstance, services: AdminDeps): void {
  api.get('/workspaces/:workspace_id/usage', async (req) => {
    const query = { ...(req.query as object) } as { since?: string; until?: string };
    check.usageQuery(query);
    return admin(req).usage(param(req, 'workspace_id'), parseUsageRange(query.since, query.until));
  });
  api.get('/workspaces/:workspace_id/requests', async (req, reply) => {
    const query = { ...(req.query as object) } as RequestLogQuery;
    check.requestsQuery(query);
    // Rows this process still holds for its next batch are committed first, so a list sees every answered request.
    await services.requestLogs.commitQueued();
    if (!acceptsCsv(req.headers.accept)) return admin(req).requests(param(req, 'workspace_id'), query);
    // Accept: text/csv: every row the filters match (from the cursor on), as the dashboard exports them.
    const lines = await admin(req).requestsCsv(param(req, 'workspace_id'), query);
    return reply.header('content-type', 'text/csv; charset=utf-8').send(Readable.from(lines));
  });
  api.get('/audit', async (req) => {
    const query = { ...(req.query as object) } as { workspace_id?: string; before?: string; limit?: number };
    check.auditQuery(query);
    return admin(req).audit(query);
  });
  api.post('/reload', async (req, reply) => reload(services, admin(req), req, reply));
}

/**
 * Loads the config file again and swaps it in, in this process and (server.workers) every other worker; the answer
 * counts the workers that took it. A config that does not load is a 400 listing its problems, and the running one
 * keeps serving.
 */
async function reload(services: AdminDeps, admin: AdminService, req: FastifyRequest, reply: FastifyReply) {
  if (!admin.global) throw new ForbiddenError('only an admin token may reload the config');
  const before = summarize(services.config);
  try {
    const { config: next, changes, restart, disabled } = await applyReload(services, req.log, ' through the admin API');
    const fleet = await reloadOtherWorkers();
    if (fleet.reloaded < fleet.total) req.log.warn(`the reload reached ${fleet.reloaded} of ${fleet.total} worker processes; the others apply it once they can (see the log)`);
    const summary = summarize(next);
    await admin.record('config.reload', null, null, { summary: before }, { summary, workers: fleet.reloaded, changes });
    // `changes` empty: nothing was applied (the files and the environment say what they said); the disabled channels say
    // which variables they still wait for.
    return reply.send({ reloaded: true, changes, restart_needed: restart, channels_disabled: disabled, summary, workers: fleet.reloaded, workers_total: fleet.total });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const shown = err.problems.slice(0, 20).join('\n');
    throw new ValidationError(`the config does not load, the running one keeps serving:\n${shown}${err.problems.length > 20 ? `\n(and ${err.problems.length - 20} more)` : ''}`, null, 'config_invalid');
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    admin?: AdminService;
  }
}
