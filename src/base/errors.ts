// One error hierarchy: every error the gateway raises carries a code, an HTTP status and whether its message may reach a client.

export interface ErrorDetails {
  param?: string | null;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
  /** The Anthropic error type, when the status alone does not say it (an upstream's own type). */
  anthropicType?: string;
  /** The status on Anthropic-dialect routes, when it differs (an upstream overload is 529 there, 503 elsewhere). */
  anthropicStatus?: number;
  /** What the operator's log says instead of the message: a detail no client should read (variable names, file paths). */
  logMessage?: string;
}

export class GatewayError extends Error {
  readonly code: string;
  readonly statusCode: number;
  /** OpenAI-style error type; the Anthropic envelope derives its own from the status. */
  readonly type: string;
  readonly expose: boolean;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  readonly anthropicType?: string;
  readonly anthropicStatus?: number;
  readonly logMessage?: string;
  /** The upstream's HTTP status when this error reports an upstream answer (the task poller tells 404 from 429 and 5xx by it); never shown. */
  upstreamStatus?: number;

  constructor(code: string, statusCode: number, type: string, message: string, details: ErrorDetails = {}, expose = true) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.statusCode = statusCode;
    this.type = type;
    this.expose = expose;
    this.param = details.param ?? null;
    this.headers = details.headers ?? {};
    this.extra = details.extra ?? {};
    this.anthropicType = details.anthropicType;
    this.anthropicStatus = details.anthropicStatus;
    this.logMessage = details.logMessage;
  }

  /** The HTTP status in an error envelope: the same everywhere unless the error says otherwise for Anthropic's. */
  statusIn(envelope: Envelope): number {
    return envelope === 'anthropic' ? (this.anthropicStatus ?? this.statusCode) : this.statusCode;
  }
}

export class ConfigError extends GatewayError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('config_invalid', 500, 'server_error', `config has ${problems.length} error(s):\n${problems.join('\n')}`, {}, false);
    this.problems = problems;
  }
}

/**
 * An operator's mistake found while serving (files that disagree, which check-config could not see): a 500 naming the
 * config, never the client's 400. Its message names channels, protocols and endpoints, never values.
 */
export class ConfigMismatchError extends GatewayError {
  constructor(message: string) {
    super('config_mismatch', 500, 'server_error', `the gateway's config is inconsistent: ${message}; the operator must correct it (npm run check-config)`);
  }
}

export class ValidationError extends GatewayError {
  constructor(message: string, param: string | null = null, code = 'invalid_request') {
    super(code, 400, 'invalid_request_error', message, { param });
  }
}

export class AuthError extends GatewayError {
  constructor(message: string, code = 'invalid_api_key') {
    super(code, 401, 'authentication_error', message);
  }
}

export class ScopeError extends GatewayError {
  constructor(scope: string) {
    super('missing_scope', 403, 'permission_error', `this API key lacks the scope "${scope}"`, { param: scope });
  }
}

export class NotFoundError extends GatewayError {
  constructor(message: string, code = 'not_found') {
    super(code, 404, 'not_found_error', message);
  }
}

export class PaymentRequiredError extends GatewayError {
  constructor(message: string, extra: Record<string, unknown>, headers?: Record<string, string>) {
    super('spend_cap_exhausted', 402, 'insufficient_quota', message, { extra, headers });
  }
}

export class LimitError extends GatewayError {
  constructor(message: string, code = 'too_large', param: string | null = null) {
    super(code, 413, 'invalid_request_error', message, { param });
  }
}

export class UnsupportedMediaError extends GatewayError {
  constructor(message: string, param: string | null = null) {
    super('unsupported_media_type', 415, 'invalid_request_error', message, { param });
  }
}

export class RateLimitError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number) {
    super('rate_limited', 429, 'rate_limit_error', message, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

export class ChannelUnavailableError extends GatewayError {
  /** `retryAfterSeconds`: when the channel is known to be tried again (an open circuit's next probe); `logMessage`: the operator's detail. */
  constructor(message: string, retryAfterSeconds?: number, logMessage?: string) {
    super('channel_unavailable', 503, 'server_error', message, { logMessage, ...(retryAfterSeconds ? { headers: { 'retry-after': String(retryAfterSeconds) } } : {}) });
  }
}

/**
 * A disabled channel, as a client sees it: not configured. Why (the variables unset, the file that disables it) is the
 * operator's business: the log line and /readyz say it, the answer does not.
 */
export function channelNotConfigured(channelId: string, reason: string): ChannelUnavailableError {
  return new ChannelUnavailableError(`channel "${channelId}" is not configured on this gateway`, undefined, reason);
}

export class UpstreamError extends GatewayError {
  /** For the operator's log, never the client: the address that could not be reached and the system's error code. */
  transport?: { address?: string; errno?: string };
  /** True when the request never reached the upstream (refused, unreachable or timed out while connecting): safe to send elsewhere. */
  nothingSent = false;

  constructor(message: string, statusCode = 502, code = 'upstream_error') {
    super(code, statusCode, 'upstream_error', message);
  }
}

export class TranslationError extends GatewayError {
  constructor(message: string, param: string | null = null) {
    super('untranslatable', 400, 'invalid_request_error', message, { param });
  }
}

export function internalError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError('internal_error', 500, 'server_error', 'internal error', {}, false);
}

/** OpenAI's envelope: `{error: {type, code, message, param}}`. */
export function openaiEnvelope(err: GatewayError) {
  return {
    error: {
      type: err.type,
      code: err.code,
      message: err.expose ? err.message : 'internal error',
      param: err.param,
      ...err.extra,
    },
  };
}

const anthropicTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'api_error',
  529: 'overloaded_error',
};

/** Anthropic's envelope: `{type: "error", error: {type, message}}`. */
export function anthropicEnvelope(err: GatewayError) {
  return {
    type: 'error',
    error: {
      type: err.anthropicType ?? anthropicTypes[err.statusIn('anthropic')] ?? 'api_error',
      message: err.expose ? err.message : 'internal error',
      code: err.code,
      ...err.extra,
    },
  };
}

/** The error envelope a route answers in (its catalogue entry's `envelope`): the client SDK's own. */
export type Envelope = 'openai' | 'anthropic';

export function errorBody(err: GatewayError, envelope: Envelope) {
  return envelope === 'anthropic' ? anthropicEnvelope(err) : openaiEnvelope(err);
}

/** Longest prefix of a client's own value that an error message or log line repeats. */
export const ECHO_LIMIT = 64;

/** A client-supplied value for a message: cut to a short prefix, then quoted with control characters escaped. */
export function clientValue(value: unknown, max = ECHO_LIMIT): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}...` : text);
}

/** Longest error message and param a client receives (and the log repeats); a safety net behind clientValue. */
export const MESSAGE_LIMIT = 1024;
const PARAM_LIMIT = 128;

/** The same error with its message and param cut to their limits, or the error itself when both fit. */
export function boundedError(err: GatewayError): GatewayError {
  const param = err.param;
  if (err.message.length <= MESSAGE_LIMIT && (param === null || param.length <= PARAM_LIMIT)) return err;
  const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...` : text);
  const bounded = new GatewayError(err.code, err.statusCode, err.type, cut(err.message, MESSAGE_LIMIT), { param: param === null ? null : cut(param, PARAM_LIMIT), headers: err.headers, extra: err.extra, anthropicType: err.anthropicType, anthropicStatus: err.anthropicStatus, logMessage: err.logMessage }, err.expose);
  bounded.stack = err.stack;
  return bounded;
}
