// What a chat translator sees of one call on one route, and the plan of a chat call: shared by the chat flow and
// the continuation of a broken stream (chat-failover.ts) and the next target after a content filter (chat-filter.ts).
import { renderCost, tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';
import { isPassthrough } from '../engine/translators.js';
import { countMessagesTokens } from '../engine/count-tokens.js';
import type { Call } from '../pipeline/call.js';
import { forwardedHeaders, type Outgoing } from '../pipeline/send.js';
import type { UsageReader } from '../pipeline/usage.js';

export interface ChatPlan {
  routes: ModelRoute[];
  /** Each route's translator, in the order of `routes`. */
  translators: ChatTranslator[];
  /** The last route's mapped request and what its translator sees: the route that answers is the last one mapped. */
  mapped?: { ctx: ChatContext; document: Record<string, unknown>; estimate?: Promise<number | undefined> };
}

/** What a translator sees of one call on one route; its methods are shared, not made for every request. */
export class ChatContext implements TranslateContext {
  readonly clientModel: string;
  readonly requestId: string;
  readonly request: Record<string, unknown>;
  /** Set once the answer's operation is known: how to read its usage. */
  reader?: UsageReader;
  /** A translated Messages stream's input tokens, counted locally (its message_start says them). */
  inputEstimate?: number;

  constructor(
    call: Call,
    readonly route: ModelRoute,
    private readonly charge: Charge,
    /** The request the translator maps: the client's, or the one that continues its broken stream. */
    request: Record<string, unknown> = call.body,
  ) {
    this.clientModel = call.body.model as string;
    this.requestId = call.requestId;
    this.request = request;
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


/** The operation a request goes to: the translation's, or the stream operation it names when the client asks to stream. */
export function operationFor(call: Call, route: ModelRoute, translator: ChatTranslator): string {
  const streamOperation = route.protocol.operations[translator.operation]?.streamOperation;
  return streamOperation && !isPassthrough(translator) && call.body.stream === true ? streamOperation : translator.operation;
}

/** The request's input tokens by the route's local tokenizer (its protocol's encoding); never fails the request. */
const inputEstimate = (call: Call, route: ModelRoute): Promise<number | undefined> =>
  countMessagesTokens(call.body, route.protocol.tokenizer?.encoding ?? 'o200k_base').then((count) => count.tokens, () => undefined);

/** The request for one route, mapped by its translator; what it maps is kept on the plan for the answer. */
export function mapChatRequest(call: Call, plan: ChatPlan, route: ModelRoute, index: number, charge: Charge): Outgoing {
  const translator = plan.translators[index];
  const ctx = new ChatContext(call, route, charge);
  const document = translator.request(call.body, ctx);
  // A translated Messages stream starts by saying its input tokens: counted locally while the upstream works on it.
  const estimate = call.body.stream === true && call.dialect === 'anthropic-messages' && !isPassthrough(translator) ? inputEstimate(call, route) : undefined;
  plan.mapped = { ctx, document, estimate };
  return { operation: operationFor(call, route, translator), document, headers: isPassthrough(translator) ? forwardedHeaders(call.headers, route) : undefined };
}
