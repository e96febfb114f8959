// One billed client request as the pipeline's stages see it: who asked, what they sent, and whether they are still there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/authenticate.js';
import type { Services } from '../services.js';
import type { LoadedConfig } from '../config/types.js';
import type { Upstreams } from '../engine/upstream.js';
import { jsonBytes } from '../billing/estimate.js';
import type { ImageForm } from './image-form.js';

export interface Call {
  services: Services;
  /** The runtime snapshot this request began on: it keeps it to the end, whatever a reload does meanwhile. */
  config: LoadedConfig;
  upstreams: Upstreams;
  req: FastifyRequest;
  reply: FastifyReply;
  auth: AuthContext;
  /** The client dialect the endpoint speaks (openai-chat, anthropic-messages, evaluate, ...). */
  dialect: string;
  body: Record<string, unknown>;
  /** A multipart request's form, once read (image edits). */
  form?: ImageForm;
  /** Size of the whole request body: every byte counts toward the input estimate. */
  bodyBytes: number;
  /** Aborts when the client hangs up before its answer is complete, or when the call's deadline passes. */
  signal: AbortSignal;
  /** True once the client hung up (as opposed to the deadline passing). */
  readonly clientGone: boolean;
  /** True once the deadline passed. */
  readonly timedOut: boolean;
  /**
   * The charge's settlement of an answer that is ready: the pipeline sends the answer first and then waits
   * for it, so the client never waits for the ledger commit (the reservation holds the cap until it lands).
   */
  settling?: Promise<void>;
  /** Starts the overall deadline of the upstream work, once: later calls keep the first deadline. */
  startDeadline(ms: number): void;
  /** Stops listening for the client hanging up, stops the deadline and lets go of the snapshot; once, whoever calls it first. */
  dispose(): void;
}

export function openCall(services: Services, req: FastifyRequest, reply: FastifyReply, dialect: string): Call {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const declared = Number(req.headers['content-length']);
  const abort = new AbortController();
  let clientGone = false;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const onClose = () => {
    if (reply.raw.writableFinished) return;
    clientGone = true;
    abort.abort();
  };
  reply.raw.on('close', onClose);
  const held = services.runtime.hold();
  return {
    services,
    config: held.snapshot.config,
    upstreams: held.snapshot.upstreams,
    req,
    reply,
    auth: req.auth!,
    dialect,
    body,
    bodyBytes: Number.isSafeInteger(declared) && declared > 0 ? declared : jsonBytes(body),
    signal: abort.signal,
    get clientGone() {
      return clientGone;
    },
    get timedOut() {
      return timedOut;
    },
    startDeadline(ms) {
      timer ??= setTimeout(() => {
        timedOut = !clientGone;
        abort.abort();
      }, ms);
    },
    dispose: () => {
      if (disposed) return;
      disposed = true;
      reply.raw.off('close', onClose);
      clearTimeout(timer);
      held.release();
    },
  };
}
