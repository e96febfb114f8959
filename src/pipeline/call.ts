// One billed client request as the pipeline's stages see it: who asked, what they sent, and whether they are still there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/authenticate.js';
import type { Services } from '../services.js';
import { jsonBytes } from '../billing/estimate.js';

export interface Call {
  services: Services;
  req: FastifyRequest;
  reply: FastifyReply;
  auth: AuthContext;
  /** The client dialect the endpoint speaks (openai-chat, anthropic-messages, evaluate, ...). */
  dialect: string;
  body: Record<string, unknown>;
  /** Size of the whole request body: every byte counts toward the input estimate. */
  bodyBytes: number;
  /** Aborts when the client hangs up before its answer is complete. */
  signal: AbortSignal;
  /** Stops listening for the client hanging up. */
  dispose(): void;
}

export function openCall(services: Services, req: FastifyRequest, reply: FastifyReply, dialect: string): Call {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const declared = Number(req.headers['content-length']);
  const abort = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) abort.abort();
  };
  reply.raw.on('close', onClose);
  return {
    services,
    req,
    reply,
    auth: req.auth!,
    dialect,
    body,
    bodyBytes: Number.isSafeInteger(declared) && declared > 0 ? declared : jsonBytes(body),
    signal: abort.signal,
    dispose: () => reply.raw.off('close', onClose),
  };
}
