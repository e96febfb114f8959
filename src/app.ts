// buildApp(services): a fastify instance whose routes come from the endpoint catalogue; no sockets until listen().
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { AuthContext } from './auth/authenticate.js';
import { authenticate, presentedKey, requireScope } from './auth/authenticate.js';
import type { EndpointConfig } from './config/types.js';
import { AuthError, GatewayError, LimitError, NotFoundError, UnsupportedMediaError, ValidationError, errorBody, internalError, type ErrorDialect } from './errors.js';
import type { HandlerFactory } from './endpoints/types.js';
import type { Services } from './services.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    endpoint?: EndpointConfig;
  }
}

const endpointsDir = join(import.meta.dirname, 'endpoints');
const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

export interface BuildOptions {
  /** pino options, or false for no logs (tests). */
  logger?: boolean | Record<string, unknown>;
}

/** Paths an endpoint answers on: its own, plus `/api` in front of `/v1` paths. */
export function endpointPaths(endpoint: EndpointConfig): string[] {
  return endpoint.aliases && endpoint.path.startsWith('/v1/') ? [endpoint.path, `/api${endpoint.path}`] : [endpoint.path];
}

/** Redacts signed tokens and keys from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:token|key|api_key)=)[^&]*/gi, '$1[REDACTED]');
}

function fastifyErrorToGateway(err: Error & { code?: string; statusCode?: number }): GatewayError {
  if (err instanceof GatewayError) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new LimitError('request body is too large', 'body_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaError(`unsupported content type; send application/json`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ValidationError('request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ValidationError(`request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) return new ValidationError(`request body is not valid JSON: ${err.message}`, null, 'invalid_json');
  if (err.statusCode === 413) return new LimitError('request body is too large', 'body_too_large');
  if (err.statusCode === 415) return new UnsupportedMediaError(err.message);
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new GatewayError(err.code ?? 'invalid_request', err.statusCode, 'invalid_request_error', err.message);
  return internalError(err);
}

function dialectOf(req: FastifyRequest): ErrorDialect {
  return req.routeOptions.config?.endpoint?.dialect ?? (req.url.includes('/messages') ? 'anthropic' : 'openai');
}

export async function buildApp(services: Services, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.gateway.server.logLevel,
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
            serializers: {
              req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id }),
            },
            ...(typeof options.logger === 'object' ? options.logger : {}),
          },
    bodyLimit: config.gateway.server.bodyLimitBytes,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
    },
    return503OnClosing: true,
  });
  app.decorateRequest('auth', undefined);
  // Multipart bodies are streamed by their handlers; one byte past the file limit lets the handler's own counter refuse it exactly.
  const maxUploadBytes = (config.gateway.files as { maxUploadBytes: number }).maxUploadBytes;
  await app.register(multipart, { limits: { fileSize: maxUploadBytes + 1, files: 16, fields: 64, fieldSize: 1024 * 1024, parts: 128 } });

  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    const endpoint = req.routeOptions.config?.endpoint;
    services.metrics.requests.inc({ route: endpoint?.name ?? 'unmatched', method: req.method, status: String(reply.statusCode) });
  });

  app.setErrorHandler(async (err: Error, req, reply) => {
    const error = fastifyErrorToGateway(err);
    if (error.statusCode >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: error.code, status: error.statusCode }, error.message);
    reply.code(error.statusCode).headers(error.headers).send(errorBody(error, dialectOf(req)));
  });
  app.setNotFoundHandler(async (req, reply) => {
    const error = new NotFoundError(`no route for ${req.method} ${redactUrl(req.url.split('?')[0])}`, 'route_not_found');
    reply.code(404).send(errorBody(error, dialectOf(req)));
  });

  for (const endpoint of config.endpoints) {
    const modulePath = pathToFileURL(join(endpointsDir, `${endpoint.handler}.ts`)).href;
    const factory = ((await import(modulePath)) as { default: HandlerFactory }).default;
    const handler = await factory({ services, endpoint });
    const validate = endpoint.requestSchema ? services.schemas.validator(endpoint.requestSchema) : undefined;
    for (const url of endpointPaths(endpoint)) {
      app.route({
        method: [...endpoint.method],
        url,
        config: { endpoint },
        bodyLimit: endpoint.bodyLimit,
        handler: async (req, reply) => {
          if (endpoint.auth !== 'none') {
            const key = presentedKey(req);
            if (key) {
              req.auth = await authenticate(services.db, key);
              req.log = req.log.child({ keyId: req.auth.keyId });
              requireScope(req.auth, endpoint.scope);
              await services.rateLimits.admit(req.auth);
            } else if (endpoint.auth === 'key') {
              throw new AuthError('an API key is required: send "Authorization: Bearer <key>" or "x-api-key: <key>"', 'missing_api_key');
            }
          }
          if (validate && !validate(req.body)) {
            const first = validate.errors![0];
            const where = first.instancePath || '/';
            const detail = first.keyword === 'required' ? `missing required field "${first.params.missingProperty}"` : first.keyword === 'additionalProperties' ? `unknown field "${first.params.additionalProperty}"` : first.message;
            throw new ValidationError(`invalid request body at ${where}: ${detail}`, where === '/' ? String(first.params.missingProperty ?? '') || null : where.slice(1).replace(/\//g, '.'));
          }
          return handler(req, reply);
        },
      });
    }
  }
  app.addHook('onClose', async () => services.close());
  return app;
}
