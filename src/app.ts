// buildApp(services): a fastify instance whose routes come from the endpoint catalogue; no sockets until listen().
import type { ErrorObject } from 'ajv';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import multipart from '@fastify/multipart';
import type { AuthContext } from './auth/authenticate.js';
import { requestAuthAsyncHook, requestAuthHook } from './auth/request-auth.js';
import type { EndpointConfig } from './config/types.js';
import { GatewayError, NotFoundError, UpstreamError, boundedError, clientValue } from './base/errors.js';
import { schemaError } from './http/schema-error.js';
import { handlers } from './endpoints/handlers.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { LazyChildLogger } from './http/lazy-logger.js';
import { logDestination } from './http/log-format.js';
import { mountOnUse } from './http/mount-on-use.js';
import { LOGGED_URL_LENGTH, RequestLogLines, redactUrl } from './http/request-log-lines.js';

export { redactUrl };
import { registerMcpRoutes } from './endpoints/mcp.js';
import { SlowBodyGuard, closeIfBodyUnread, refuseDeclaredOverLimit, serverTimeouts } from './http/body-guard.js';
import { MAX_URL_LENGTH, clientErrorHandler, envelopeOf, frameworkError, sendError, toGatewayError, uriTooLong } from './http/request-errors.js';
import type { Services } from './services.js';
import { sortableId } from './store/sortable-id.js';
import { recordOf } from './request-logs/record.js';
import { responseTap } from './request-logs/bodies.js';
import { requestLogsConfig } from './request-logs/config.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    endpoint?: EndpointConfig;
  }
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

export interface BuildOptions {
  /** pino options, or false for no logs (tests). */
  logger?: boolean | Record<string, unknown>;
}

/** Paths an endpoint answers on: its own, plus `/api` in front of `/v1` paths. */
export function endpointPaths(endpoint: EndpointConfig): string[] {
  return endpoint.aliases && endpoint.path.startsWith('/v1/') ? [endpoint.path, `/api${endpoint.path}`] : [endpoint.path];
}


/** The client hung up before the answer (its connection is gone): nothing failed on the gateway's side. */
function clientAborted(req: FastifyRequest): boolean {
  return req.raw.socket?.destroyed === true;
}

/** The error a request of a known key answers, for its request-log row (and, with capture on, its body). */
function noteError(req: FastifyRequest, error: GatewayError, services: Services): void {
  const record = recordOf(req);
  record.errorType = error.type;
  record.errorCode = error.code;
  responseTap(req, requestLogsConfig(services.config))?.add(JSON.stringify({ error: { type: error.type, code: error.code, message: error.expose ? error.message : 'internal error' } }));
}

/** Multipart limits besides sizes: counted per request. */
const multipartLimits = { files: 16, fields: 64, parts: 128 };
/** What a form may declare beyond its largest file (fields, part headers, boundaries). */
const FORM_ROOM_BYTES = 1024 * 1024;

/** fastify's options: logging (redacted, a request's logger made only when it writes), body limit, server timeouts, request ids, framework errors. */
function fastifyOptions(config: Services['config'], options: BuildOptions): FastifyServerOptions {
  return {
    logger:
      options.logger === false
        ? false
        : {
            level: config.gateway.server.logLevel,
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
            serializers: {
              req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: redactUrl(req.url.slice(0, LOGGED_URL_LENGTH)), id: req.id }),
            },
            stream: logDestination(),
            ...(typeof options.logger === 'object' ? options.logger : {}),
          },
    // One line per request, none for health probes (src/http/request-log-lines.ts).
    logController: new RequestLogLines(),
    bodyLimit: config.gateway.server.bodyLimitBytes,
    ...serverTimeouts(config.gateway.server.timeouts),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : sortableId('req');
    },
    // A request's logger is made when it first writes a line, not for every request.
    childLoggerFactory: (logger, bindings, options) => new LazyChildLogger(logger, bindings, Object.keys(options).length ? options : undefined),
    return503OnClosing: true,
    clientErrorHandler,
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      closeIfBodyUnread(req, reply);
      sendError(reply, frameworkError(err), envelopeOf(req));
    },
  };
}

/** Whether an Accept header is a browser's: text/html named, as browsers send it for a page (a JSON client sends JSON or any type). */
function prefersHtml(accept: string | undefined): boolean {
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept.slice(0, 1024));
}

/**
 * App-wide hooks and handlers: tracing, the request id, what a request may declare and how fast its body must come, the
 * request metric, errors in the route's envelope, 404.
 */
function registerHooks(app: FastifyInstance, services: Services): void {
  // Tracing, when configured, opens each request's span before anything else looks at it.
  services.tracing?.register(app);
  const bodies = new SlowBodyGuard(services.config.gateway.server.timeouts, (req, bytes) =>
    app.log.info({ code: 'body_too_slow', bytes, url: redactUrl((req.url ?? '').slice(0, LOGGED_URL_LENGTH)) }, 'cut a request body arriving slower than server.timeouts.minBodyBytesPerSecond'),
  );
  app.addHook('onClose', async () => bodies.stop());
  // Node closes the keep-alive connections idle when the server closes, not those whose request ends after: without
  // this, one left idle a moment later held close() for keepAliveMs (72 s).
  let idleSweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => void (idleSweep = setInterval(() => app.server.closeIdleConnections(), 100).unref()));
  app.addHook('onClose', async () => clearInterval(idleSweep));
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (req.url.length > MAX_URL_LENGTH) return done(uriTooLong());
    bodies.watch(req.raw);
    done();
  });
  // A body declared over the route's limit is refused before a byte of it is read, once the route's own onRequest hooks
  // ran: a client without a valid key learns that first (401), not the route's size limit.
  app.addHook('preParsing', (req, _reply, payload, done) => done(refuseDeclaredOverLimit(req, req.routeOptions.bodyLimit) ?? null, payload));
  app.addHook('onResponse', (req, reply, done) => {
    const endpoint = req.routeOptions.config?.endpoint;
    // Catalogue routes by name; the dashboard's pages as one route; anything else (404s) as unmatched.
    const route = endpoint?.name ?? (req.routeOptions.url?.startsWith('/dashboard') ? 'dashboard' : req.routeOptions.url?.startsWith('/admin/') ? 'admin' : req.routeOptions.url?.startsWith('/mcp') ? 'mcp' : 'unmatched');
    services.metrics.countRequest(route, req.method, reply.statusCode);
    // An API request of a known key gets its request-log row, written with the next settlement batch.
    if (endpoint && req.auth && services.requestLogs.enabled) services.requestLogs.answered(req, reply, endpoint);
    done();
  });
  answerErrors(app, services);
}

/** Errors in the route's envelope (the client's hang-up as 499), and the typed 404: the gateway's app and the admin API's. */
function answerErrors(app: FastifyInstance, services: Services): void {
  app.setErrorHandler(async (err: Error, req, reply) => {
    if (clientAborted(req)) {
      req.log.info({ code: 'client_aborted' }, 'client closed the connection before the answer');
      return reply.code(499).send();
    }
    const error = boundedError(toGatewayError(err, multipartLimits));
    if (req.auth) noteError(req, error, services);
    // A typed 502-504 says what happened (a disabled channel, an upstream's failure): a warning with its code. A stack
    // trace is for what nobody anticipated (a 500).
    const anticipated = err instanceof GatewayError && error.statusCode !== 500;
    if (error.statusCode >= 500 && !anticipated) req.log.error({ err }, 'request failed');
    else req.log[error.statusCode >= 500 ? 'warn' : 'info']({ code: error.code, status: error.statusCode, ...(err instanceof UpstreamError ? err.transport : {}) }, error.logMessage ?? error.message);
    closeIfBodyUnread(req, reply);
    sendError(reply, error, envelopeOf(req));
  });
  app.setNotFoundHandler(async (req, reply) => {
    // A person who opens the gateway's address in a browser lands on the dashboard; API clients keep the typed 404.
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url.split('?')[0] === '/' && prefersHtml(req.headers.accept)) return reply.redirect('/dashboard', 302);
    const error = new NotFoundError(`no route for ${req.method.slice(0, 16)} ${clientValue(redactUrl(req.url.split('?')[0]), 128)}`, 'route_not_found');
    closeIfBodyUnread(req, reply);
    sendError(reply, error, envelopeOf(req));
  });
}

/** Registers one catalogue endpoint: its handler (traced when tracing is on), key check and request schema, at each of its paths. */
async function addEndpoint(scope: FastifyInstance, services: Services, endpoint: EndpointConfig): Promise<void> {
  const factory = Object.hasOwn(handlers, endpoint.handler) ? handlers[endpoint.handler] : undefined;
  if (!factory) throw new Error(`endpoint "${endpoint.name}": no handler "${endpoint.handler}" in src/endpoints/handlers.ts`);
  const tracing = services.tracing;
  const made = await factory({ services, endpoint });
  const handler = tracing ? tracing.handler(made) : made;
  const authHook = endpoint.auth === 'none' ? undefined : tracing ? tracing.auth(requestAuthAsyncHook(services, endpoint)) : requestAuthHook(services, endpoint);
  // A form's fields are checked by the handler that reads it (there is no JSON body to check here).
  // Looked up per request in the current snapshot's schemas: a reload applies an edited request schema.
  const schemaId = endpoint.requestSchema && !endpoint.multipart ? endpoint.requestSchema : undefined;
  for (const url of endpointPaths(endpoint)) {
    scope.route({
      method: [...endpoint.method],
      url,
      config: { endpoint },
      // A form is read as a stream by its own counters, not by fastify: its limit here is what it may declare.
      bodyLimit: endpoint.multipart ? Math.max(endpoint.bodyLimit ?? 0, services.config.gateway.files.maxUploadBytes + FORM_ROOM_BYTES) : endpoint.bodyLimit,
      onRequest: authHook,
      // Not async: one promise a request fewer (fastify answers a thrown error through the error handler all the same).
      handler: schemaId
        ? (req, reply) => {
            const check = services.schemas.validator(schemaId);
            if (!check(req.body)) throw schemaError(check.errors![0]);
            return handler(req, reply);
          }
        : handler,
    });
  }
}

export async function buildApp(services: Services, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const serverOptions = fastifyOptions(config, options);
  const app = Fastify(serverOptions);
  app.decorateRequest('auth', undefined);
  registerJsonBodyParser(app);
  const maxUploadBytes = (config.gateway.files as { maxUploadBytes: number }).maxUploadBytes;
  registerHooks(app, services);
  for (const endpoint of config.endpoints) if (!endpoint.multipart) await addEndpoint(app, services, endpoint);
  // Multipart bodies are streamed by their handlers; one byte past the file limit lets the handler's own counter refuse it exactly.
  // The plugin adds hooks to every request of its scope, so only the routes that read forms are in it.
  await app.register(async (forms) => {
    await forms.register(multipart, { limits: { fileSize: maxUploadBytes + 1, fieldSize: 1024 * 1024, ...multipartLimits } });
    for (const endpoint of config.endpoints) if (endpoint.multipart) await addEndpoint(forms, services, endpoint);
  });
  registerMcpRoutes(app, services);
  // Built on their first request (src/http/mount-on-use.ts): a gateway that only relays never loads them.
  mountOnUse(app, '/dashboard', serverOptions, async (dashboard) => (await import('./dashboard/index.js')).registerDashboard(dashboard, services));
  mountOnUse(app, '/admin/v1', serverOptions, async (admin) => {
    answerErrors(admin, services);
    await (await import('./admin/routes.js')).registerAdminApi(admin, services);
  });
  app.addHook('onClose', async () => services.close());
  return app;
}
