// The chat dialects (OpenAI chat, Anthropic Messages, Responses): inputs, map request (pass-through or by protocol pair), and
// the answer or the stream mapped back with its outputs and settlement; run.ts sends and settles failures.
import type { Charge } from '../billing/meter.js';
import { clientOutputBound, estimateChatMicros, usesServerTools } from '../billing/estimate.js';
import { billingConfig } from '../billing/config.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';
import { isPassthrough, translatorFor } from '../engine/translators.js';
import type { Call } from '../pipeline/call.js';
import { expectEventStream, readJsonObject } from '../pipeline/decode.js';
import type { Flow } from '../pipeline/flow.js';
import { forwardedHeaders, type Sent } from '../pipeline/send.js';
import { exceedsReservation, reportedCounts, SettlingAnswer, settleFromUsage } from '../pipeline/settle.js';
import { relayStream } from '../pipeline/stream.js';
import { usageReaderFor, type UsageReader } from '../pipeline/usage.js';
import { resolveInputs } from '../pipeline/inputs.js';
import { archiveOutputs } from '../pipeline/outputs.js';
import { keepingItems, recordResponseId, recordTranslatedItems } from '../pipeline/provider-ids.js';
import { countMessagesTokens } from '../engine/count-tokens.js';
import { ChatContext, operationFor, type ChatPlan } from './chat-context.js';
import { chatStreamFailover } from './chat-failover.js';

/** The request's input tokens by the route's local tokenizer (its protocol's encoding); never fails the request. */
const inputEstimate = (call: Call, route: ModelRoute): Promise<number | undefined> =>
  countMessagesTokens(call.body, route.protocol.tokenizer?.encoding ?? 'o200k_base').then((count) => count.tokens, () => undefined);

/** decode and map the answer, or relay the stream: usage read, outputs archived, the answer settled as it goes out. */
async function chatAnswer(call: Call, plan: ChatPlan, sent: Sent, charge: Charge): Promise<unknown> {
  const translator = plan.translators[plan.routes.indexOf(sent.route)];
  const { ctx, document, estimate } = plan.mapped!;
  // Usage beyond the model's limits (else the default bound, widened to the request) is impossible, unless the upstream
  // ran tools of its own (several calls in one).
  const choices = usesServerTools(call.body) ? null : Number.isInteger(call.body.n) && (call.body.n as number) > 1 ? (call.body.n as number) : 1;
  const request = sent.route.model.limits ? undefined : { bytes: call.bodyBytes, outputTokens: clientOutputBound(call.body) };
  const usage = usageReaderFor(call.config, sent, sent.operationName, choices, undefined, request);
  ctx.reader = usage;
  const streamFlag = sent.operation.streamFlag;
  if (sent.operation.response === 'sse' || sent.operation.response === 'stream' || (streamFlag !== undefined && document[streamFlag] === true)) {
    await expectEventStream(sent);
    // message_start says the local count, so the first event waits for it (bounded: the count stops after 1 s); the
    // stream is read meanwhile, so an upstream that ends early loses nothing it sent.
    const counted = estimate?.then((count) => (ctx.inputEstimate ??= count));
    const mapper = translator.stream(ctx, call.body);
    return relayStream(call, sent, isPassthrough(translator) ? mapper : keepingItems(call, mapper), usage, charge, counted, chatStreamFailover(call, plan, sent, charge));
  }
  // decode and map the answer; it is sent while its settlement commits.
  const answer = await readJsonObject(sent);
  await recordResponseId(call, answer);
  usage.fromAnswer(answer);
  await reportedCounts(call, charge, sent.route, usage);
  // outputs: media the answer carries are archived before it is mapped and sent.
  await archiveOutputs(call, sent.operation.outputs?.answer, answer);
  const mapped = translator.response(answer, ctx);
  if (!isPassthrough(translator)) await recordTranslatedItems(call, mapped);
  return new SettlingAnswer(mapped, settleFromUsage(charge, sent.route, usage, call.log), exceedsReservation(charge, sent.route, usage));
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
    request(call, plan, route, index, charge) {
      const translator = plan.translators[index];
      const ctx = new ChatContext(call, route, charge);
      const document = translator.request(call.body, ctx);
      // A translated Messages stream starts by saying its input tokens: counted locally while the upstream works on it.
      const estimate = call.body.stream === true && call.dialect === 'anthropic-messages' && !isPassthrough(translator) ? inputEstimate(call, route) : undefined;
      plan.mapped = { ctx, document, estimate };
      return { operation: operationFor(call, route, translator), document, headers: isPassthrough(translator) ? forwardedHeaders(call.headers, route) : undefined };
    },
    answer: chatAnswer,
  };
}
