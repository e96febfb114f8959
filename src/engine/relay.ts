// The shared chat relay: resolve the model, reserve, translate, call upstream, stream or answer, settle.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/authenticate.js';
import { renderCost, tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import { estimateChatMicros } from '../billing/estimate.js';
import type { Charge } from '../billing/meter.js';
import { GatewayError, internalError } from '../errors.js';
import type { Services } from '../services.js';
import { resolveModel } from './models.js';
import { readSse, sseFrame, writeFrames } from './sse.js';
import type { TranslateContext } from './translator.js';
import { translatorFor } from './translators.js';
import { upstreamTransportError } from './upstream.js';

export interface ChatRelayOptions {
  clientDialect: string;
  body: Record<string, unknown>;
}

function settleUsage(charge: Charge, ctx: TranslateContext, usage: TokenUsage) {
  return charge.settle({
    costMicros: tokenCostMicros(ctx.route.model.price, usage),
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.cachedInputTokens,
  });
}

/** The upstream did work but reported no usage: fail closed and charge the reservation rather than nothing. */
function chargeWithoutUsage(charge: Charge, req: FastifyRequest, channel: string) {
  req.log.warn({ channel }, 'upstream answered without usage; charging the reserved worst case');
  return charge.settleReserved();
}

export async function relayChat(services: Services, req: FastifyRequest, reply: FastifyReply, options: ChatRelayOptions): Promise<void> {
  const { config, upstreams, meter } = services;
  const { body, clientDialect } = options;
  const auth = req.auth as AuthContext;
  const routes = resolveModel(config, body.model, 'chat');
  const translators = new Map(routes.map((r) => [r, translatorFor(config, clientDialect, r)]));
  const charge = await meter.begin({ auth, route: routes[0], requestId: req.id, estimateMicros: estimateChatMicros(routes, body) });

  const abort = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) abort.abort();
  };
  reply.raw.on('close', onClose);

  const contextFor = (route: (typeof routes)[number]): TranslateContext => ({
    route,
    clientModel: body.model as string,
    requestId: req.id,
    costOf: (usage) => renderCost({ micros: tokenCostMicros(route.model.price, usage), currency: route.model.price.currency }),
  });

  let selected;
  try {
    selected = await upstreams.sendFirst(routes, (route) => ({
      operation: translators.get(route)!.operation,
      body: JSON.stringify(translators.get(route)!.request(body, contextFor(route))),
      signal: abort.signal,
    }));
  } catch (err) {
    reply.raw.off('close', onClose);
    // A client that hung up may have left the upstream working: charge the reservation, as for an abandoned stream.
    await (abort.signal.aborted ? charge.settleReserved() : charge.release());
    throw err;
  }
  const { route, response } = selected;
  const translator = translators.get(route)!;
  const ctx = contextFor(route);

  if (!body.stream) {
    try {
      const upstreamBody = (await response.body.json()) as Record<string, unknown>;
      const usage = translator.usage(upstreamBody);
      const answer = translator.response(upstreamBody, ctx);
      if (usage) await settleUsage(charge, ctx, usage);
      else await chargeWithoutUsage(charge, req, route.channel.id);
      reply.raw.off('close', onClose);
      reply.send(answer);
    } catch (err) {
      reply.raw.off('close', onClose);
      await (abort.signal.aborted ? charge.settleReserved() : charge.release());
      throw err instanceof SyntaxError ? new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${route.channel.id}" sent a malformed answer`) : upstreamTransportError(err, route.channel.id);
    }
    return;
  }

  const mapper = translator.stream(ctx, body);
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': req.id,
  });
  res.flushHeaders();
  let streamed = false;
  try {
    for await (const event of readSse(response.body)) {
      if (abort.signal.aborted) break;
      await writeFrames(res, mapper.push(event).map(sseFrame));
    }
    if (!abort.signal.aborted) await writeFrames(res, mapper.end().map(sseFrame));
    streamed = true;
  } catch (err) {
    if (!abort.signal.aborted) {
      const error = err instanceof SyntaxError
        ? new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${route.channel.id}" sent a malformed stream event`)
        : internalError(upstreamTransportError(err, route.channel.id));
      req.log.warn({ err, channel: route.channel.id }, 'upstream stream failed');
      await writeFrames(res, mapper.fail(error).map(sseFrame)).catch(() => undefined);
    }
    response.body.destroy();
  } finally {
    res.off('close', onClose);
    const usage = mapper.usage();
    // A stream cut short is charged what the upstream reported so far; with nothing reported, the reservation decides.
    if (usage) await settleUsage(charge, ctx, usage);
    else if (abort.signal.aborted || streamed) await chargeWithoutUsage(charge, req, route.channel.id);
    else await charge.release();
    if (!res.writableEnded) res.end();
  }
}
