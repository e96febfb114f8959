// The chat dialects (OpenAI chat, Anthropic Messages, Responses): inputs, map request, send, decode, outputs, map the answer or the stream, settle.
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import { estimateChatMicros, usesServerTools } from '../billing/estimate.js';
import { billingConfig } from '../billing/config.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from './resolve.js';
import { countMessagesTokens } from '../engine/count-tokens.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';
import type { TokenUsage } from '../billing/cost.js';
import { isPassthrough, translatorFor } from '../engine/translators.js';
import type { Call } from './call.js';
import { expectEventStream, readJsonObject } from './decode.js';
import type { Dialect } from './dialect.js';
import { forwardedHeaders, send, type Sent } from './send.js';
import { SettlingAnswer, settleAfterFailure, settleFromUsage } from './settle.js';
import { relayStream } from './stream.js';
import { usageReaderFor, type UsageReader } from './usage.js';
import { resolveInputs } from './inputs.js';
import { archiveOutputs } from './outputs.js';
import { keepingItems, recordResponseId, recordTranslatedItems } from './provider-ids.js';

interface ChatPlan {
  routes: ModelRoute[];
  /** Each route's translator, in the order of `routes`. */
  translators: ChatTranslator[];
}

/** What a translator sees of one call on one route; its methods are shared, not made for every request. */
class ChatContext implements TranslateContext {
  readonly clientModel: string;
  readonly requestId: string;
  readonly request: Record<string, unknown>;
  /** Set once the answer's operation is known: how to read its usage. */
  reader?: UsageReader;
  inputEstimate?: number;

  constructor(
    call: Call,
    readonly route: ModelRoute,
    private readonly charge: Charge,
  ) {
    this.clientModel = call.body.model as string;
    this.requestId = call.requestId;
    this.request = call.body;
  }

  reservedCost() {
    return renderCost({ micros: this.charge.ref.amountMicros, currency: this.charge.ref.currency });
  }

  usage() {
    return this.reader?.counts();
  }

  costOf(counts: TokenUsage) {
    const price = this.route.model.price;
    return renderCost({ micros: tokenCostMicros(price, counts), currency: price.currency });
  }
}

/** The request's input tokens by the route's local tokenizer (its protocol's encoding); never fails the request. */
const inputEstimate = (call: Call, route: ModelRoute): Promise<number | undefined> =>
  countMessagesTokens(call.body, route.protocol.tokenizer?.encoding ?? 'o200k_base').catch(() => undefined);

export function chatDialect(operation: string): Dialect<ChatPlan> {
  return {
    resolve(call) {
      const routes = resolveCallModel(call, call.body.model, 'chat');
      return { routes, translators: routes.map((r) => translatorFor(call.config, call.dialect, r, operation)) };
    },
    inputs: (call, plan) => resolveInputs(call, plan.routes),
    estimate: (call, plan) => estimateChatMicros(plan.routes, call.body, call.bodyBytes, billingConfig(call.config).defaultLimits),
    async execute(call, plan, charge: Charge) {
      // map request, route by route as the send stage reaches it (a translation refusal is a 400 before anything is sent), and send.
      // The route that answers is the last one mapped.
      let ctx!: ChatContext;
      let document!: Record<string, unknown>;
      let sent: Sent;
      // A translated Messages stream starts by saying its input tokens: counted locally while the upstream works on it.
      const estimate = call.body.stream === true && call.dialect === 'anthropic-messages' && !isPassthrough(plan.translators[0]) ? inputEstimate(call, plan.routes[0]) : undefined;
      try {
        sent = await send(call, plan.routes, (route, index) => {
          const translator = plan.translators[index];
          ctx = new ChatContext(call, route, charge);
          document = translator.request(call.body, ctx);
          return { operation: translator.operation, document, headers: isPassthrough(translator) ? forwardedHeaders(call.headers, route) : undefined };
        });
      } catch (err) {
        // A client that hung up may have left the upstream working: charge the reservation, as for an abandoned stream.
        await settleAfterFailure(charge, call.clientGone);
        throw err;
      }
      const translator = plan.translators[plan.routes.indexOf(sent.route)];
      // Usage beyond the model's limits is impossible, unless the upstream ran tools of its own (several calls in one).
      const choices = usesServerTools(call.body) ? null : Number.isInteger(call.body.n) && (call.body.n as number) > 1 ? (call.body.n as number) : 1;
      const usage = usageReaderFor(call.config, sent, translator.operation, choices);
      ctx.reader = usage;
      if (estimate && !isPassthrough(translator)) ctx.inputEstimate = await estimate;
      const streamFlag = sent.operation.streamFlag;
      const streaming = sent.operation.response === 'sse' || (streamFlag !== undefined && document[streamFlag] === true);
      try {
        if (streaming) {
          await expectEventStream(sent);
          const mapper = translator.stream(ctx, call.body);
          return await relayStream(call, sent, isPassthrough(translator) ? mapper : keepingItems(call, mapper), usage, charge);
        }
        // decode and map the answer; it is sent while its settlement commits.
        const answer = await readJsonObject(sent);
        await recordResponseId(call, answer);
        usage.fromAnswer(answer);
        usage.counts();
        // outputs: media the answer carries are archived before it is mapped and sent.
        await archiveOutputs(call, sent.operation.outputs?.answer, answer);
        const mapped = translator.response(answer, ctx);
        if (!isPassthrough(translator)) await recordTranslatedItems(call, mapped);
        return new SettlingAnswer(mapped, settleFromUsage(charge, sent.route, usage, call.log));
      } catch (err) {
        // An answer arrived (or the client left the upstream working): the upstream did the work.
        await settleAfterFailure(charge, true);
        throw err;
      }
    },
  };
}
