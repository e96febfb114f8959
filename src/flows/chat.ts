// The chat dialects (OpenAI chat, Anthropic Messages, Responses): inputs, map request (pass-through or by protocol pair), and
// the answer or the stream mapped back with its outputs and settlement; run.ts sends and settles failures.
import type { Charge } from '../billing/meter.js';
import { estimateChatMicros } from '../billing/estimate.js';
import { billingConfig } from '../billing/config.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import { isPassthrough, translatorFor } from '../engine/translators.js';
import type { Call } from '../pipeline/call.js';
import { expectEventStream } from '../pipeline/decode.js';
import type { Flow } from '../pipeline/flow.js';
import type { Sent } from '../pipeline/send.js';
import { relayStream } from '../pipeline/stream.js';
import { resolveInputs } from '../pipeline/inputs.js';
import { keepingItems } from '../pipeline/provider-ids.js';
import { chatUsageReader, settledAnswer } from './chat-answer.js';
import { mapChatRequest, type ChatPlan } from './chat-context.js';
import { chatStreamFailover } from './chat-failover.js';
import { answerPastFilters } from './chat-filter.js';

/** decode and map the answer, or relay the stream: usage read, outputs archived, the answer settled as it goes out. */
async function chatAnswer(call: Call, plan: ChatPlan, sent: Sent, charge: Charge): Promise<unknown> {
  const streamFlag = sent.operation.streamFlag;
  if (sent.operation.response === 'sse' || sent.operation.response === 'stream' || (streamFlag !== undefined && plan.mapped!.document[streamFlag] === true)) {
    const translator = plan.translators[plan.routes.indexOf(sent.route)];
    const { ctx, estimate } = plan.mapped!;
    const usage = chatUsageReader(call, plan, sent);
    await expectEventStream(sent);
    // message_start says the local count, so the first event waits for it (bounded: the count stops after 1 s); the
    // stream is read meanwhile, so an upstream that ends early loses nothing it sent.
    const counted = estimate?.then((count) => (ctx.inputEstimate ??= count));
    const mapper = translator.stream(ctx, call.body);
    return relayStream(call, sent, isPassthrough(translator) ? mapper : keepingItems(call, mapper), usage, charge, counted, chatStreamFailover(call, plan, sent, charge));
  }
  return sent.route.via?.route.contentFilter ? answerPastFilters(call, plan, sent, charge) : settledAnswer(call, plan, sent, charge);
}

/** A route's attempts that can take the client's dialect, with their translators; when none can, the first one's refusal. */
function routedPlan(call: Call, routes: ModelRoute[], operation: string): ChatPlan {
  const plan: ChatPlan = { routes: [], translators: [] };
  let refusal: unknown;
  for (const route of routes) {
    try {
      plan.translators.push(translatorFor(call.config, call.dialect, route, operation));
      plan.routes.push(route);
    } catch (err) {
      refusal ??= err;
    }
  }
  if (!plan.routes.length) throw refusal;
  return plan;
}

export function chatFlow(operation: string, kind: string): Flow<ChatPlan> {
  return {
    resolve(call) {
      const routes = resolveCallModel(call, call.body.model, kind);
      if (routes[0].via) return routedPlan(call, routes, operation);
      return { routes, translators: routes.map((r) => translatorFor(call.config, call.dialect, r, operation)) };
    },
    inputs: (call, plan) => resolveInputs(call, plan.routes),
    estimate: (call, plan) => estimateChatMicros(plan.routes, call.body, call.bodyBytes, billingConfig(call.config).defaultLimits),
    // map request, route by route (a translation refusal is a 400 before anything is sent).
    request: mapChatRequest,
    answer: chatAnswer,
  };
}
