// The dashboard at /dashboard: server-rendered pages (eta), htmx for in-page actions, session sign-in, CSRF on every
// form, helmet's headers with a CSP that allows no inline script. Encapsulated: nothing here touches the API routes.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import secureSession from '@fastify/secure-session';
import fastifyStatic from '@fastify/static';
import view from '@fastify/view';
import { Eta } from 'eta';
import { GatewayError } from '../base/errors.js';
import type { DashboardDeps } from './deps.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerFilesRoutes } from './routes/files.js';
import { registerKeysRoutes } from './routes/keys.js';
import { registerUsageRoutes } from './routes/usage.js';
import { registerSsoRoutes } from './routes/sso.js';
import { registerAuditRoutes } from './routes/audit.js';
import { registerWebhooksRoutes } from './routes/webhooks.js';
import { registerLogsRoutes } from './routes/logs.js';
import { registerMcpRoutes } from './routes/mcp.js';
import { SESSION_COOKIE, SESSION_SECONDS, sessionKey } from './session.js';

const viewsDir = join(import.meta.dirname, 'views');
const publicDir = join(import.meta.dirname, 'public');
const htmxDir = dirname(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'));
/** Form bodies are a few short fields. */
const FORM_BODY_LIMIT = 16 * 1024;

export async function registerDashboard(app: FastifyInstance, services: DashboardDeps): Promise<void> {
  await app.register(
    async (dashboard) => {
      await registerPlugins(dashboard, services);

      // Pages carry CSRF tokens, signed links and, once, a new API key: never kept by a cache.
      dashboard.addHook('onSend', async (_req, reply) => {
        if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) reply.header('cache-control', 'no-store');
      });
      dashboard.setErrorHandler(async (err: FastifyError, req, reply) => renderError(req, reply, err));
      dashboard.setNotFoundHandler(async (req, reply) => renderError(req, reply, new GatewayError('not_found', 404, 'not_found_error', 'no such page')));

      dashboard.get('/', async (_req, reply) => reply.redirect('/dashboard/files', 303));
      registerSsoRoutes(dashboard, services);
      registerAuthRoutes(dashboard, services);
      registerFilesRoutes(dashboard, services);
      registerKeysRoutes(dashboard, services);
      registerUsageRoutes(dashboard, services);
      registerLogsRoutes(dashboard, services);
      registerAuditRoutes(dashboard, services);
      registerWebhooksRoutes(dashboard, services);
      registerMcpRoutes(dashboard, services);
    },
    { prefix: '/dashboard' },
  );
}

/** The plugins every page relies on: helmet's headers and CSP, the session, CSRF, forms, views and static assets. */
async function registerPlugins(dashboard: FastifyInstance, services: DashboardDeps): Promise<void> {
  const https = services.config.gateway.server.publicUrl.startsWith('https://');
  await dashboard.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        mediaSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    strictTransportSecurity: https,
  });
  await dashboard.register(secureSession, {
    key: await sessionKey(services.db),
    cookieName: SESSION_COOKIE,
    expiry: SESSION_SECONDS,
    cookie: { path: '/', httpOnly: true, sameSite: 'strict', secure: https ? true : 'auto', maxAge: SESSION_SECONDS },
  });
  await dashboard.register(csrf, { sessionPlugin: '@fastify/secure-session' });
  await dashboard.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  await dashboard.register(view, {
    engine: { eta: new Eta({ views: viewsDir, cache: true, autoEscape: true }) },
    templates: viewsDir,
    production: true,
  });
  await dashboard.register(fastifyStatic, { root: publicDir, prefix: '/assets/', cacheControl: true, maxAge: '1h' });
  await dashboard.register(fastifyStatic, {
    root: htmxDir,
    prefix: '/assets/htmx/',
    decorateReply: false,
    allowedPath: (path) => path === '/htmx.min.js',
    maxAge: '1h',
  });
}

/** Errors as a page: signed-out visitors go to sign-in; htmx actions get a short message the page shows. */
async function renderError(req: FastifyRequest, reply: FastifyReply, err: FastifyError | GatewayError) {
  const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
  const exposed = status < 500 && (!(err instanceof GatewayError) || err.expose);
  const message = exposed ? err.message.slice(0, 300) : 'something went wrong; try again';
  if (status >= 500) req.log.error({ err }, 'dashboard request failed');
  const htmx = req.headers['hx-request'] === 'true';
  if (status === 401 && req.method === 'GET' && !htmx) return reply.redirect('/dashboard/login', 303);
  if (status === 401 && htmx) return reply.code(401).header('hx-redirect', '/dashboard/login').send();
  if (err instanceof GatewayError) reply.headers(err.headers);
  // Shown above the page (the layout's #action-error), not in place of the row or form that asked.
  if (htmx) return reply.code(status).headers({ 'hx-retarget': '#action-error', 'hx-reswap': 'innerHTML' }).type('text/html').send(`<p class="error" role="alert">${escapeHtml(message)}</p>`);
  return reply.code(status).view('error', { title: `Error ${status}`, status, message, dashboard: req.dashboard });
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
