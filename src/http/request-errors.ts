// Turns what fastify, its body parsers and the HTTP parser throw into the gateway's typed errors, bounded and never echoing the URL.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, LimitError, UnsupportedMediaError, ValidationError, errorBody, internalError, type Envelope } from '../base/errors.js';

/** Longest request target (path and query) served; longer ones are 414 before routing. */
export const MAX_URL_LENGTH = 8192;

/** The multipart limits, so a refusal can say which one was hit. */
export interface MultipartLimits {
  files: number;
  fields: number;
  parts: number;
}

/** What busboy throws on a body that is not well-formed multipart (no boundary, garbage, cut short). */
const malformedMultipart = [/^Multipart: Boundary not found$/, /unexpected end of multipart data$/i, /^Boundary required$/, /^Unsupported Content-Type/];

export function isMalformedMultipart(err: Error): boolean {
  return malformedMultipart.some((pattern) => pattern.test(err.message));
}

export function toGatewayError(err: Error & { code?: string; statusCode?: number }, limits: MultipartLimits): GatewayError {
  if (err instanceof GatewayError) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new LimitError('request body is too large', 'body_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaError('unsupported content type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ValidationError('request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ValidationError('request body is not valid JSON', null, 'invalid_json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ValidationError('the Content-Length header does not match the body', null, 'invalid_content_length');
    case 'FST_PARTS_LIMIT':
      return new LimitError(`too many multipart parts: at most ${limits.parts}`, 'too_many_parts');
    case 'FST_FILES_LIMIT':
      return new LimitError(`too many files in one request: at most ${limits.files}`, 'too_many_files');
    case 'FST_FIELDS_LIMIT':
      return new LimitError(`too many form fields: at most ${limits.fields}`, 'too_many_fields');
    case 'FST_REQ_FILE_TOO_LARGE':
      return new LimitError('a file in the request is too large', 'file_too_large', 'file');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new UnsupportedMediaError('send multipart/form-data');
    case 'FST_PROTO_VIOLATION':
      return new ValidationError('a form field uses a forbidden name ("__proto__" or "constructor")', null, 'forbidden_key');
    case 'FST_MP_PREMATURE_CLOSE':
      return new ValidationError('the multipart body ended before it was complete', null, 'invalid_multipart');
  }
  if (isMalformedMultipart(err)) return new ValidationError('the multipart body is malformed (missing boundary, or cut short)', null, 'invalid_multipart');
  if (err instanceof SyntaxError) return new ValidationError('request body is not valid JSON', null, 'invalid_json');
  if (err.statusCode === 413) return new LimitError('request body is too large', 'body_too_large');
  if (err.statusCode === 415) return new UnsupportedMediaError('unsupported content type');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new GatewayError(err.code ?? 'invalid_request', err.statusCode, 'invalid_request_error', err.message);
  return internalError(err);
}

/** Errors fastify raises before a route is found: a malformed percent-encoding (400), a path parameter over its length (414). */
export function frameworkError(err: Error & { code?: string }): GatewayError {
  if (err.code === 'FST_ERR_BAD_URL') return new ValidationError('the request URL is not valid (malformed percent-encoding)', null, 'invalid_url');
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return new GatewayError('uri_too_long', 414, 'invalid_request_error', 'a path segment of the request URL is too long');
  return internalError(err);
}

export function uriTooLong(): GatewayError {
  return new GatewayError('uri_too_long', 414, 'invalid_request_error', `the request URL is longer than ${MAX_URL_LENGTH} characters`);
}

/**
 * Answers on the raw socket for requests the HTTP parser refused (oversized headers, garbage); no request object exists
 * yet. A request refused before its body was parsed (no key: a 401 sent while the parser still had the body's bytes to
 * read) has its answer on the wire already: the socket is closed without a second one after it, as node's own handler does.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // `_httpMessage`: the response node's server has in flight on this socket (node's own handler reads it the same way).
  if ((socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request was not received in time']
        : [400, 'malformed_request', 'the request is not valid HTTP'];
  const body = JSON.stringify(errorBody(new GatewayError(code, status, 'invalid_request_error', message), 'openai'));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** Sends a typed error in the route's envelope. */
export function sendError(reply: FastifyReply, error: GatewayError, envelope: Envelope): FastifyReply {
  return reply.code(error.statusIn(envelope)).headers(error.headers).send(errorBody(error, envelope));
}

/** The error envelope of a request: its endpoint's, else guessed from the path. */
export function envelopeOf(req: FastifyRequest): Envelope {
  return req.routeOptions?.config?.endpoint?.envelope ?? (/\/v1\/messages(?:[/?]|$)/.test(req.url) ? 'anthropic' : 'openai');
}
