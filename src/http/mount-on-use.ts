// A part of the gateway's HTTP surface that a gateway which only relays never uses (the dashboard, the admin API) is its
// own fastify app, built on the first request under its prefix (issue 52: RSS idle under 100 MiB a worker). Its modules
// and plugins (the dashboard's helmet, views and static files; the encrypted session and its libsodium; the admin API's
// compiled schemas and OpenAPI document), loaded at the start, held several MiB of every worker for the process's life.
// The gateway's app keeps two routes, the prefix and everything under it, in a scope whose body parser reads nothing:
// its hooks run as for any request (the request id, the URL's length, the slow-body guard, the declared body limit,
// the request metric and log line when the answer ends); then the request is handed, unread, to the part's own router
// (fastify's `routing`), which parses the body, runs its hooks and answers.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { registerJsonBodyParser } from './json-body.js';

/** The gateway's request id, carried to the part's request for the same HTTP request. */
const gatewayRequestId = Symbol('gateway.requestId');
type Handed = IncomingMessage & { [gatewayRequestId]?: string };

/**
 * Mounts at `prefix` the app `register` fills: built on the first request there and kept; a build that fails answers
 * that request with a 500 (the gateway's error handler) and is tried again by the next. `options` are the gateway app's
 * own (timeouts, framework errors, child loggers), less its request log lines: the gateway's route writes the one line.
 * The part's app parses JSON as the gateway does and sets the request id header; the rest is `register`'s.
 */
export function mountOnUse(app: FastifyInstance, prefix: string, options: FastifyServerOptions, register: (part: FastifyInstance) => Promise<void>): void {
  let built: Promise<FastifyInstance> | undefined;
  const part = () =>
    (built ??= build(app, options, register).catch((err: unknown) => {
      built = undefined;
      throw err;
    }));
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Left unread for the part's own parsers.
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    const hand = async (req: FastifyRequest, reply: FastifyReply) => {
      const router = await part();
      (req.raw as Handed)[gatewayRequestId] = req.id;
      reply.hijack();
      router.routing(req.raw, reply.raw);
    };
    scope.all(prefix, hand);
    scope.all(`${prefix}/*`, hand);
  });
  app.addHook('onClose', async () => {
    const running = await built?.catch(() => undefined);
    await running?.close();
  });
}

async function build(app: FastifyInstance, options: FastifyServerOptions, register: (part: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const { logger: _logger, logController: _lines, genReqId: _ids, ...rest } = options as FastifyServerOptions & { logController?: unknown };
  const part = Fastify({
    ...rest,
    loggerInstance: app.log,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => (req as Handed)[gatewayRequestId] ?? 'req-unknown',
  });
  registerJsonBodyParser(part);
  part.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  await register(part);
  await part.ready();
  return part;
}
