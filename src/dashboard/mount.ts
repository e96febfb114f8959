// The dashboard is its own fastify app, built on the first request under /dashboard (issue 52: RSS idle under 100 MiB a
// worker). Its plugins (helmet, the encrypted session and its libsodium, CSRF, views, static files) and its pages are
// code a gateway that only relays never runs; loaded at the start, they held about 4 MiB of every worker for the
// process's life. The gateway's app keeps two routes, /dashboard and /dashboard/*, in a scope whose body parser reads
// nothing: its hooks run as for any request (the request id, the URL's length, the slow-body guard, the declared body
// limit, the request metric and log line when the answer ends), then the request is handed, unread, to the dashboard's
// own router (fastify's `routing`), which parses the form, runs the session and CSRF hooks and answers as before.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { registerJsonBodyParser } from '../http/json-body.js';
import type { DashboardDeps } from './deps.js';

/** The gateway's request id, carried to the dashboard's request for the same HTTP request. */
const gatewayRequestId = Symbol('gateway.requestId');
type Handed = IncomingMessage & { [gatewayRequestId]?: string };

/**
 * Mounts the dashboard at /dashboard: built (its modules imported, its session key read, its plugins registered) by the
 * first request there and kept; a build that fails answers that request with a 500 and is tried again by the next.
 * `options` are the gateway app's own (timeouts, errors, child loggers), less its request log lines: the gateway's
 * routes already write one for the request.
 */
export function mountDashboard(app: FastifyInstance, services: DashboardDeps, options: FastifyServerOptions): void {
  let built: Promise<FastifyInstance> | undefined;
  const dashboard = () =>
    (built ??= buildDashboard(app, services, options).catch((err: unknown) => {
      built = undefined;
      throw err;
    }));
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Left unread for the dashboard's own parsers (forms, 16 KiB).
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    const hand = async (req: FastifyRequest, reply: FastifyReply) => {
      const router = await dashboard();
      (req.raw as Handed)[gatewayRequestId] = req.id;
      reply.hijack();
      router.routing(req.raw, reply.raw);
    };
    scope.all('/dashboard', hand);
    scope.all('/dashboard/*', hand);
  });
  app.addHook('onClose', async () => {
    const running = await built?.catch(() => undefined);
    await running?.close();
  });
}

async function buildDashboard(app: FastifyInstance, services: DashboardDeps, options: FastifyServerOptions): Promise<FastifyInstance> {
  const { registerDashboard } = await import('./index.js');
  const { logger: _logger, logController: _lines, genReqId: _ids, ...rest } = options as FastifyServerOptions & { logController?: unknown };
  const dashboard = Fastify({
    ...rest,
    loggerInstance: app.log,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => (req as Handed)[gatewayRequestId] ?? 'req-dashboard',
  });
  registerJsonBodyParser(dashboard);
  dashboard.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  await registerDashboard(dashboard, services);
  await dashboard.ready();
  return dashboard;
}
