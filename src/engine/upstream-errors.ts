// An upstream's error answer in the gateway's terms: its message found, bounded and scrubbed, its status class, type,
// code and param kept, so each client's SDK raises its own typed error; read the same way whether the answer came
// instead of the response or inside a stream (an AWS exception frame). A call that failed in transport becomes a timeout or unreachable.
import { errors as undiciErrors, type Dispatcher } from '../net/undici.js';
import type { ModelRoute } from '../config/types.js';
import { GatewayError, UpstreamError } from '../base/errors.js';
import { secretsOf } from './credentials/secrets.js';
import { transportCause } from './transport-cause.js';
import { readBoundedText, scrubUpstreamText } from './upstream-text.js';

type ResponseHeaders = Dispatcher.ResponseData<unknown>['headers'];

/** Keeps an upstream's complaint about the request useful without revealing where or what the upstream is. */
export function sanitizeUpstreamMessage(message: string, route: ModelRoute): string {
  return scrubUpstreamText(message, { upstreamModel: route.model.upstream, clientModel: route.model.id, secrets: secretsOf(route.channel) });
}

/** The message of the common error bodies: `{error: {message}}`, `{error: "..."}`, `{message}`. */
export function commonErrorMessage(answer: unknown): unknown {
  const json = (answer ?? {}) as { error?: { message?: string } | string; message?: string };
  return (typeof json.error === 'string' ? json.error : json.error?.message) ?? json.message;
}

/** What an upstream error body says besides its message, in the common shapes (OpenAI `{error: {type, code, param}}`, Anthropic `{type: "error", error: {type}}`). */
interface UpstreamErrorFields {
  type?: string;
  code?: string;
  param?: string;
}

/** An identifier-like value (a type or code) as the client may see it: short, and only word characters, dots and dashes. */
const identifier = (v: unknown) => (typeof v === 'string' && /^[\w.-]{1,64}$/.test(v) ? v : undefined);

function commonErrorFields(answer: unknown): UpstreamErrorFields {
  const error = (answer as { error?: unknown } | null)?.error;
  if (!error || typeof error !== 'object') return {};
  const e = error as Record<string, unknown>;
  return { type: identifier(e.type), code: identifier(e.code) ?? (typeof e.code === 'number' ? String(e.code) : undefined), param: typeof e.param === 'string' ? e.param : undefined };
}

export async function upstreamHttpError(response: Dispatcher.ResponseData<unknown>, route: ModelRoute, readMessage: (answer: unknown) => unknown = commonErrorMessage): Promise<GatewayError> {
  let text = '';
  try {
    text = await readBoundedText(response.body);
  } catch {
    // body unreadable: the status says enough
  }
  return upstreamErrorOf(response.statusCode, response.headers, text, route, readMessage);
}

/**
 * An upstream's error body (`text`) under an HTTP status, in the gateway's terms. An error that arrives inside a stream
 * (an AWS exception frame, which the API reference gives an HTTP status) is read the same way as one that came instead of it.
 */
export function upstreamErrorOf(status: number, headers: ResponseHeaders, text: string, route: ModelRoute, readMessage: (answer: unknown) => unknown = commonErrorMessage): GatewayError {
  let message = '';
  let fields: UpstreamErrorFields = {};
  try {
    const answer = JSON.parse(text);
    const found = readMessage(answer);
    message = typeof found === 'string' ? found : '';
    fields = commonErrorFields(answer);
  } catch {
    message = '';
  }
  message = sanitizeUpstreamMessage(String(message), route);
  if (fields.param) fields.param = sanitizeUpstreamMessage(fields.param, route).slice(0, 128);
  const error = upstreamStatusError(status, headers, route, message, fields);
  error.upstreamStatus = status;
  return error;
}

/** Seconds of an upstream's `retry-after` (seconds or an HTTP date), or undefined when it gave none. */
function upstreamRetryAfter(headers: ResponseHeaders): Record<string, string> | undefined {
  const value = headers['retry-after'];
  if (typeof value !== 'string' || !value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : new Date(value).getTime() - Date.now();
  return Number.isFinite(ms) && ms > 0 ? { 'retry-after': String(Math.ceil(ms / 1000)) } : undefined;
}

/** Anthropic's overload status: on the Messages route it stays 529 (the SDK's OverloadedError); elsewhere it is 503. */
const OVERLOADED = 529;

/**
 * An upstream's error answer in the gateway's terms, keeping its meaning: the status class, the upstream's type or code
 * (context_length_exceeded, model_not_found, insufficient_quota, rate_limit_exceeded, overloaded_error) and param, and
 * `retry-after` only when the upstream gave one. Credential refusals and server failures are the gateway's problem (502).
 */
function upstreamStatusError(status: number, headers: ResponseHeaders, route: ModelRoute, message: string, fields: UpstreamErrorFields): GatewayError {
  const channel = route.channel.id;
  const said = (fallback: string) => (message ? `${fallback}: ${message}` : fallback);
  const retryAfter = upstreamRetryAfter(headers);
  if (status === OVERLOADED || fields.type === 'overloaded_error') {
    return new GatewayError(fields.code ?? 'overloaded', 503, 'server_error', said(`channel "${channel}" is overloaded`), { headers: retryAfter, anthropicType: 'overloaded_error', anthropicStatus: OVERLOADED });
  }
  if (status === 429) {
    // A quota that is spent stays spent: no retry-after, and the SDKs are told not to retry.
    if (fields.code === 'insufficient_quota' || fields.type === 'insufficient_quota') {
      return new GatewayError('insufficient_quota', 429, 'insufficient_quota', said(`channel "${channel}" has exhausted its upstream quota`), { headers: { 'x-should-retry': 'false' }, anthropicType: 'rate_limit_error' });
    }
    return new GatewayError(fields.code ?? 'rate_limit_exceeded', 429, fields.type && fields.type !== 'error' ? fields.type : 'rate_limit_error', said(`channel "${channel}" is rate limited upstream`), { headers: retryAfter, anthropicType: 'rate_limit_error' });
  }
  if (status === 400 || status === 409 || status === 413 || status === 422) {
    return new GatewayError(fields.code ?? 'upstream_rejected', status === 413 ? 413 : 400, 'invalid_request_error', said('upstream rejected the request'), { param: fields.param ?? null });
  }
  if (status === 404) {
    return new GatewayError(fields.code ?? 'not_found', 404, 'invalid_request_error', said('upstream did not find what the request names'), { param: fields.param ?? null, anthropicType: 'not_found_error' });
  }
  if (status === 401 || status === 403) return new UpstreamError(`channel "${channel}" refused the gateway's credentials`, 502, 'upstream_auth_failed');
  if (status === 503) return new GatewayError(fields.code ?? 'upstream_unavailable', 503, 'server_error', `channel "${channel}" is unavailable (status 503)`, { headers: retryAfter });
  return new UpstreamError(`channel "${channel}" failed (status ${status})`, 502);
}

/** Failures while connecting: the request never left the gateway. */
const connectFailures = new Set(['UND_ERR_CONNECT_TIMEOUT', 'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

export function upstreamTransportError(err: unknown, channel: string): Error {
  if (err instanceof GatewayError) return err;
  if ((err as Error)?.name === 'AbortError') return err as Error;
  const code = (err as { code?: string })?.code;
  let error: UpstreamError;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || err instanceof undiciErrors.HeadersTimeoutError) {
    error = new UpstreamError(`channel "${channel}" timed out`, 504, 'upstream_timeout');
  } else {
    error = new UpstreamError(`channel "${channel}" is unreachable`, 502, 'upstream_unreachable');
    error.transport = transportCause(err);
  }
  error.nothingSent = code !== undefined && connectFailures.has(code);
  return error;
}
