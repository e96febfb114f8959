// What a mode needs for one request, and how a question's failure is reported.
import type { ModelRoute } from '../config/types.js';
import { GatewayError, internalError } from '../base/errors.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { EvaluateSettings, Question } from './types.js';

export interface ModeContext {
  /** The request's runtime snapshot config (its compiled templates). */
  config: LoadedConfig;
  route: ModelRoute;
  settings: EvaluateSettings;
  questions: Question[];
  state: unknown;
  signal: AbortSignal;
  /** One upstream call through the pipeline's send and decode stages; its usage is added to the request's. */
  exchange(operation: string, document: unknown): Promise<Record<string, unknown>>;
}

/** The same error, its message prefixed with the question id so the client knows which one failed. */
export function questionError(id: string, err: unknown): GatewayError {
  const error = err instanceof GatewayError ? err : isMalformed(err) ? malformed() : internalError(err);
  return new GatewayError(error.code, error.statusCode, error.type, `question "${id}": ${error.message}`, { param: `questions.${id}`, headers: error.headers, extra: error.extra }, error.expose);
}

function isMalformed(err: unknown): boolean {
  return err instanceof SyntaxError;
}

function malformed(): GatewayError {
  return new GatewayError('upstream_malformed', 502, 'upstream_error', 'the channel sent a malformed answer');
}

export { upstreamMalformed } from '../pipeline/usage.js';
