// POST /v1/messages/count_tokens: a Messages request's input tokens, never billed. Passed through (model mapped, vendor
// headers forwarded) to a channel whose protocol has a `count_tokens` operation; counted locally with the protocol's
// BPE encoding elsewhere, the answer then marked `x-token-count: approximate` (`; extrapolated` when the text was too long
// to count whole within the counting budget: engine/count-tokens.ts).
import type { FastifyReply } from 'fastify';
import type { ModelRoute } from '../config/types.js';
import { lifecycleHeaders, resolveModel, routesOf } from '../engine/models.js';
import { relayedAs } from '../engine/passthrough.js';
import { operationDialect } from '../engine/translators.js';
import { readBoundedText } from '../engine/upstream-text.js';
import { upstreamMalformed } from '../pipeline/usage.js';
import { encode, forwardedHeaders } from '../pipeline/send.js';
import { countMessagesTokens } from '../engine/count-tokens.js';
import type { HandlerFactory } from './types.js';

const OPERATION = 'count_tokens';

const create: HandlerFactory = ({ services, endpoint }) => async (req, reply) => {
  const held = services.runtime.hold();
  try {
    const { config, upstreams } = held.snapshot;
    const body = req.body as Record<string, unknown>;
    const routes = resolveModel(config, body.model, endpoint.options!.modelKind as string, () => services.now());
    for (const [name, value] of lifecycleHeaders(routesOf(config, body.model as string)![0].model)) reply.header(name, value);
    const counting = routes.filter((r) => operationDialect(r, OPERATION) === 'anthropic-messages');
    if (counting.length) return await countUpstream(counting, body, req.headers, upstreams, reply);
    const encoding = routes[0].protocol.tokenizer?.encoding ?? 'o200k_base';
    const counted = await countLocally(body, encoding, reply);
    reply.header('x-token-count', `approximate; encoding=${encoding}${counted.extrapolated ? '; extrapolated' : ''}`);
    return { input_tokens: counted.tokens };
  } finally {
    held.release();
  }
};

/** Runs `work` with a signal that aborts when the client hangs up before the answer is written. */
async function untilHangUp<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const raw = reply.raw;
  const hangUp = () => {
    if (!raw.writableFinished) abort.abort();
  };
  raw.once('close', hangUp);
  try {
    return await work(abort.signal);
  } finally {
    raw.off('close', hangUp);
  }
}

/** Counts on this process, within the counter's budget; a client hanging up stops the counting. */
function countLocally(body: Record<string, unknown>, encoding: string, reply: FastifyReply) {
  return untilHangUp(reply, (signal) => countMessagesTokens(body, encoding, { signal }));
}

async function countUpstream(
  routes: ModelRoute[],
  body: Record<string, unknown>,
  headers: import('node:http').IncomingHttpHeaders,
  upstreams: import('../engine/upstream.js').Upstreams,
  reply: FastifyReply,
): Promise<unknown> {
  // The client hanging up ends the upstream call too.
  return untilHangUp(reply, async (hungUp) => {
    const { route, response } = await upstreams.sendFirst(routes, (route) => {
      const operation = route.protocol.operations[OPERATION];
      const encoded = encode(operation, relayedAs(body, route.model.upstream ?? route.model.id));
      hungUp.throwIfAborted();
      return {
        operation: OPERATION,
        body: encoded.body,
        headers: { ...forwardedHeaders(headers, route), ...encoded.headers },
        signal: AbortSignal.any([hungUp, AbortSignal.timeout(operation.deadlineMs ?? route.channel.timeouts.deadlineMs)]),
      };
    });
    let answer: unknown;
    try {
      answer = JSON.parse(await readBoundedText(response.body));
    } catch {
      throw upstreamMalformed(route.channel.id, 'its count_tokens answer is not JSON');
    }
    const count = (answer as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) throw upstreamMalformed(route.channel.id, 'its count_tokens answer has no input_tokens count');
    reply.header('x-token-count', 'upstream');
    return { ...(answer as object), input_tokens: count };
  });
}

export default create;
