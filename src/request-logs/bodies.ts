// Request and response bodies, only when the operator turns capture on (requestLogs.captureBodies, globally or for one
// workspace): kept in the blob store under the row's id, cut at maxBodyBytes, with credentials redacted (redact.ts:
// secret-named headers and fields, credential-shaped strings, the presented key wherever it appears), and deleted with
// the row by the sweep. What is stored is all the Logs pages show.
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { presentedKey } from '../auth/authenticate.js';
import type { BlobStore } from '../files/blob-store.js';
import type { Db } from '../store/db.js';
import { findWorkspaceById } from '../store/workspaces.js';
import { capturesBodies, type RequestLogsConfig } from './config.js';
import { isSecretName, REDACTED, redactAnswer, redactText, redactValue } from './redact.js';

/** Headers that hold credentials without saying so in their name. */
const secretHeaders = new Set(['cookie', 'set-cookie']);
/** A query parameter: its name is judged as a field's is (`?key=`, `?access_token=`). */
const SECRET_QUERY = /([?&])([^=&#]*)=[^&#]*/g;

const mayCaptureOf = new WeakMap<RequestLogsConfig, boolean>();

/** Whether capture may be on for anyone: only then is an answer's body kept while it goes out. Once per config. */
export function mayCapture(config: RequestLogsConfig): boolean {
  let may = mayCaptureOf.get(config);
  if (may === undefined) mayCaptureOf.set(config, (may = config.captureBodies || Object.values(config.workspaces ?? {}).some((w) => w.captureBodies === true)));
  return may;
}

/** What an answer's body was, as it went out: text up to the cap. */
export class BodyTap {
  private readonly parts: string[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly max: number) {}

  add(chunk: unknown): void {
    if (this.bytes >= this.max) {
      if (chunk !== undefined && chunk !== null && String(chunk).length > 0) this.truncated = true;
      return;
    }
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
    const room = this.max - this.bytes;
    const kept = Buffer.byteLength(text) > room ? Buffer.from(text).subarray(0, room).toString('utf8') : text;
    if (kept.length < text.length) this.truncated = true;
    this.parts.push(kept);
    this.bytes += Buffer.byteLength(kept);
  }

  text(): string {
    return this.parts.join('');
  }
}

const tapKey = Symbol('responseTap');
type WithTap = { [tapKey]?: BodyTap };

/** The tap keeping a request's answer (made when capture may be on), or undefined. */
export function responseTap(req: object, config: RequestLogsConfig): BodyTap | undefined {
  if (!mayCapture(config)) return undefined;
  return ((req as WithTap)[tapKey] ??= new BodyTap(config.maxBodyBytes));
}

export function existingTap(req: object): BodyTap | undefined {
  return (req as WithTap)[tapKey];
}

const hiderKey = Symbol('captureHider');
type WithHider = { [hiderKey]?: (text: string) => string };

/** Has a request's captured answer stored with `hide` applied (a guardrail's restored values put back as placeholders). */
export function hideInCapture(req: object, hide: (text: string) => string): void {
  (req as WithHider)[hiderKey] = hide;
}

/** Taps a stream's writes (an event stream or relayed bytes) into the request's tap. */
export function tapWrites(res: { write: (...args: any[]) => boolean; end: (...args: any[]) => unknown }, tap: BodyTap): void {
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = (chunk: unknown, ...rest: unknown[]) => {
    tap.add(chunk);
    return write(chunk, ...rest);
  };
  res.end = (chunk?: unknown, ...rest: unknown[]) => {
    if (chunk !== undefined && typeof chunk !== 'function') tap.add(chunk);
    return end(chunk, ...rest);
  };
}

/** The stored document: what the detail view shows. */
export interface CapturedBodies {
  request: { method: string; url: string; headers: Record<string, string>; body: string; truncated: boolean };
  response: { body: string; truncated: boolean };
}

function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= max) return { text, truncated: false };
  return { text: Buffer.from(text).subarray(0, max).toString('utf8'), truncated: true };
}

type CaptureDeps = { db: Db; blobs: BlobStore; config: RequestLogsConfig };

/** Whether bodies are captured for this workspace now (its name is read only when an override may name it). */
async function capturing({ db, config }: CaptureDeps, workspaceId: string): Promise<boolean> {
  if (!mayCapture(config)) return false;
  const named = Object.keys(config.workspaces ?? {}).some((name) => name !== workspaceId);
  const name = named ? (await findWorkspaceById(db, workspaceId))?.name : undefined;
  return capturesBodies(config, { id: workspaceId, name });
}

async function store(blobs: BlobStore, workspaceId: string, rowId: string, document: CapturedBodies): Promise<string> {
  const blobKey = `${workspaceId}/${rowId}`;
  await blobs.put(blobKey, Readable.from([Buffer.from(JSON.stringify(document))]), 'application/json');
  return blobKey;
}

/**
 * Stores what a call that is not an HTTP request of its own carried (an MCP tool call: its arguments and its result),
 * redacted as a request's bodies are, when capture is on for its workspace; the blob key, or null.
 */
export async function captureCallBodies(deps: CaptureDeps, workspaceId: string, rowId: string, call: { method: string; url: string; request: unknown; response: unknown; secrets?: string[] }): Promise<string | null> {
  if (!(await capturing(deps, workspaceId))) return null;
  const request = cut(JSON.stringify(redactValue(call.request, call.secrets)) ?? '', deps.config.maxBodyBytes);
  const response = cut(JSON.stringify(redactValue(call.response, call.secrets)) ?? '', deps.config.maxBodyBytes);
  return store(deps.blobs, workspaceId, rowId, {
    request: { method: call.method, url: call.url, headers: {}, body: request.text, truncated: request.truncated },
    response: { body: response.text, truncated: response.truncated },
  });
}

/** Stores a request's bodies when capture is on for its workspace; the blob key, or null when nothing was stored. */
export async function captureBodies(deps: CaptureDeps, req: FastifyRequest, rowId: string): Promise<string | null> {
  const { config } = deps;
  const workspaceId = req.auth!.workspaceId;
  if (!(await capturing(deps, workspaceId))) return null;
  let key: string | undefined;
  try {
    key = presentedKey(req);
  } catch {
    key = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [header, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[header] = secretHeaders.has(header.toLowerCase()) || isSecretName(header) ? REDACTED : redactText(Array.isArray(value) ? value.join(', ') : value, key);
  }
  const body = req.body === undefined ? (req.isMultipart?.() ? '(multipart form: not captured)' : '') : JSON.stringify(redactValue(req.body, key));
  const requestBody = cut(body, config.maxBodyBytes);
  const tap = existingTap(req);
  const hide = (req as WithHider)[hiderKey];
  const answer = tap?.text() ?? '';
  const document: CapturedBodies = {
    request: { method: req.method, url: redactText(req.url, key).replace(SECRET_QUERY, (pair, start: string, name: string) => (isSecretName(name) ? `${start}${name}=${REDACTED}` : pair)), headers, body: requestBody.text, truncated: requestBody.truncated },
    response: { body: redactAnswer(hide ? hide(answer) : answer, key), truncated: tap?.truncated ?? false },
  };
  return store(deps.blobs, workspaceId, rowId, document);
}

/** A row's captured bodies, or undefined when there are none (or they are gone). */
export async function readBodies(blobs: BlobStore, key: string | null): Promise<CapturedBodies | undefined> {
  if (!key) return undefined;
  try {
    const stream = await blobs.get(key);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as CapturedBodies;
  } catch {
    return undefined;
  }
}
