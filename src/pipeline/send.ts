// The send stage: encode the mapped document as the operation declares, send it under an overall deadline, fall back in order.
import type { IncomingHttpHeaders } from 'node:http';
import type { FormData } from 'undici';
import { isFormData, webClasses } from '../net/undici.js';
import type { ModelRoute, OperationConfig } from '../config/types.js';
import { UpstreamError, ValidationError } from '../base/errors.js';
import type { AttemptRecord, UpstreamResponse } from '../engine/upstream.js';
import type { UpstreamScope } from './core.js';
import { editTopLevel, encodedTextOf } from '../http/json-text.js';

export interface Outgoing {
  operation: string;
  /** The mapped request document (absent for `encoding: none`). */
  document?: unknown;
  /** Values for the operation's path besides `model` (e.g. an upstream task id). */
  pathScope?: Record<string, unknown>;
  /** Client headers the route's protocol forwards (pass-through), or a task step's own headers. */
  headers?: Record<string, string>;
  /** A path and query on the channel's own origin instead of the operation's (an absolute URL the upstream gave). */
  originPath?: string;
  /** Sent once, never retried by the channel's retries (a task's submit). */
  once?: boolean;
}

/** Longest value of a forwarded client header. */
const FORWARDED_HEADER_LIMIT = 1024;

/**
 * The client headers a route's protocol declares it forwards (`forwardHeaders`), as the client sent them: a
 * pass-through's upstream gets the client's anthropic-version, anthropic-beta, OpenAI-Beta. Undefined when none.
 */
export function forwardedHeaders(client: IncomingHttpHeaders, route: ModelRoute): Record<string, string> | undefined {
  const names = route.protocol.forwardHeaders;
  if (!names) return undefined;
  let headers: Record<string, string> | undefined;
  for (const name of names) {
    const raw = client[name];
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    if (value.length > FORWARDED_HEADER_LIMIT) throw new ValidationError(`header ${name} is longer than ${FORWARDED_HEADER_LIMIT} characters`, name, 'header_too_long');
    (headers ??= {})[name] = value;
  }
  return headers;
}

export interface Sent {
  route: ModelRoute;
  response: UpstreamResponse;
  operation: OperationConfig;
  /** The operation's name in its protocol (the answer's stream operation when the client asked for a stream). */
  operationName: string;
  /** True when the deadline, not the client, ended the call. */
  timedOut(): boolean;
  /** The most bytes a JSON answer may have (server.upstreamAnswerMaxBytes). */
  readonly answerLimit: number;
  /** A routed call's record of this attempt, as the request log lists it. */
  readonly attempt?: AttemptRecord;
}

/** Multipart fields from a mapped document: Blobs become file parts, arrays repeat their field, objects travel as JSON. */
export function toFormData(document: unknown): FormData {
  // A relay builds its form itself (repeated fields, file names kept).
  if (isFormData(document)) return document;
  const form = new (webClasses().FormData)();
  const append = (name: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (value instanceof Blob) form.append(name, value, (value as File).name ?? name);
    else if (typeof value === 'object') form.append(name, JSON.stringify(value));
    else form.append(name, String(value));
  };
  for (const [name, value] of Object.entries((document ?? {}) as Record<string, unknown>)) {
    if (Array.isArray(value) && value.some((v) => v instanceof Blob)) for (const item of value) append(name, item);
    else append(name, value);
  }
  return form;
}

export function encode(op: OperationConfig, document: unknown): { body?: string | FormData; headers: Readonly<Record<string, string>> } {
  switch (op.encoding) {
    case 'none':
      return noBody;
    case 'multipart':
      // undici sets the multipart content-type with its boundary.
      return { body: toFormData(document), headers: {} };
    default: {
      const text = encodedTextOf(document) ?? JSON.stringify(document);
      return { body: op.body ? editedBody(text, document, op.body) : text, headers: jsonHeaders };
    }
  }
}

/**
 * The JSON body with the operation's `body` changes made to its top-level members: the client's text kept member by
 * member where it is at hand (only the separators between members are rewritten), else the document serialised again.
 */
function editedBody(text: string, document: unknown, edits: NonNullable<OperationConfig['body']>): string {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(edits.set ?? {})) values[name] = JSON.stringify(value);
  const edited = editTopLevel(text, values, edits.remove ?? []);
  if (edited !== undefined) return edited;
  const copy: Record<string, unknown> = { ...(document as Record<string, unknown>), ...edits.set };
  for (const name of edits.remove ?? []) delete copy[name];
  return JSON.stringify(copy);
}

/** Whether a mapped request asks its operation for a stream (its `streamFlag` member is true). */
export const asksForStream = (op: OperationConfig | undefined, document: unknown) =>
  op?.streamFlag !== undefined && !!document && typeof document === 'object' && (document as Record<string, unknown>)[op.streamFlag] === true;

const noBody = Object.freeze({ body: undefined, headers: Object.freeze({}) });
const jsonHeaders = Object.freeze({ 'content-type': 'application/json' });

/** 64 MiB: the most a JSON answer may have when the config says nothing. */
export const DEFAULT_ANSWER_LIMIT = 64 * 1024 * 1024;

export const deadlineError = (route: ModelRoute) => new UpstreamError(`channel "${route.channel.id}" did not finish within its deadline`, 504, 'upstream_timeout');

/**
 * Sends to the first route that answers. Only failures before any answer (unreachable, 5xx, 429) move on to
 * the next route of a fallback group; the deadline, started at the first send, covers the whole call, body and stream included.
 */
export async function send(call: UpstreamScope, routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => Outgoing): Promise<Sent> {
  let operation!: OperationConfig;
  let operationName!: string;
  try {
    const { route, response, attempt } = await call.upstreams.sendFirst(routes, (route, index) => {
      const outgoing = build(route, index);
      operation = route.protocol.operations[outgoing.operation];
      operationName = outgoing.operation;
      call.startDeadline(operation?.deadlineMs ?? route.channel.timeouts.deadlineMs);
      const { body, headers } = operation ? encode(operation, outgoing.document) : noBody;
      return { operation: outgoing.operation, body, headers: outgoing.headers ? { ...outgoing.headers, ...headers } : headers, pathScope: outgoing.pathScope, originPath: outgoing.originPath, signal: call.abortSource, once: outgoing.once, stream: asksForStream(operation, outgoing.document) };
    }, call);
    return new SentCall(call, route, response, operation, operationName, attempt);
  } catch (err) {
    throw call.timedOut ? deadlineError(routes[0]) : err;
  }
}

class SentCall implements Sent {
  constructor(
    private readonly call: UpstreamScope,
    readonly route: ModelRoute,
    readonly response: UpstreamResponse,
    readonly operation: OperationConfig,
    readonly operationName: string,
    readonly attempt?: AttemptRecord,
  ) {}

  timedOut(): boolean {
    return this.call.timedOut;
  }

  get answerLimit(): number {
    return this.call.config.gateway.server.upstreamAnswerMaxBytes ?? DEFAULT_ANSWER_LIMIT;
  }
}
