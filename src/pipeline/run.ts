// The one path every billed upstream call takes: read -> resolve -> inputs -> estimate -> reserve -> execute; the Charge closes last.
import type { FastifyReply } from 'fastify';
import type { RouteHandler } from '../endpoints/types.js';
import { encodedTextOf } from '../http/json-text.js';
import type { PipelineDeps } from './deps.js';
import { openCall } from './call.js';
import { chatDialect } from './chat.js';
import type { Dialect } from './dialect.js';
import { evaluateDialect } from './evaluate.js';
import { imagesDialect } from './images.js';
import { reserve } from './reserve.js';
import { answerBeforeCommit, SettlingAnswer } from './settle.js';

export interface PipelineEndpoint {
  /** The client dialect of the endpoint's requests and answers. */
  dialect: 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'evaluate' | 'openai-images';
  /** The request is a multipart form (image edits). */
  form?: boolean;
  /** The protocol operation the endpoint calls. */
  operation: string;
}

function dialectFor(endpoint: PipelineEndpoint): Dialect<any> {
  if (endpoint.dialect === 'evaluate') return evaluateDialect(endpoint.operation);
  if (endpoint.dialect === 'openai-images') return imagesDialect(endpoint.operation, { form: endpoint.form });
  return chatDialect(endpoint.operation);
}

/** What goes out for an answer: the upstream's own JSON text when a pass-through relays it, else the answer to serialise. */
function payloadOf(reply: FastifyReply, answer: unknown): unknown {
  const text = encodedTextOf(answer);
  if (text === undefined) return answer;
  reply.header('content-type', 'application/json; charset=utf-8');
  return text;
}

/** A route handler that runs `endpoint`'s requests through the pipeline. Handlers hold no billing of their own. */
export function pipelineHandler(services: PipelineDeps, endpoint: PipelineEndpoint): RouteHandler {
  const dialect = dialectFor(endpoint);
  return async (req, reply) => {
    const call = openCall(services, req, reply, endpoint.dialect);
    try {
      // Stages with nothing to do cost no turn of the event loop.
      if (dialect.read) await dialect.read(call);
      const plan = dialect.resolve(call);
      const inputs = dialect.inputs?.(call, plan);
      if (inputs) await inputs;
      const charge = await reserve(call, plan.routes[0], dialect.estimate(call, plan));
      try {
        const result = await dialect.execute(call, plan, charge);
        if (!(result instanceof SettlingAnswer)) {
          const answer = payloadOf(reply, result);
          return reply.sent ? undefined : answer;
        }
        const answer = payloadOf(reply, result.answer);
        // The client never waits for the ledger commit where the store batches it (the reservation holds the cap until it lands).
        if (!answerBeforeCommit(call)) {
          await result.settled;
          return answer;
        }
        if (!reply.sent) reply.send(answer);
        call.dispose();
        await result.settled.catch((err: unknown) => req.log.error({ err }, 'the answer was sent but its charge could not be recorded'));
        return reply;
      } finally {
        // Released unless settled: every exit, thrown or returned, ends the charge exactly once.
        await charge.close();
      }
    } finally {
      call.dispose();
    }
  };
}
