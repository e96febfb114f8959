// The chat dialects (OpenAI chat, Anthropic Messages, Responses): inputs, map request, send, decode, outputs, map the answer or the stream, settle.
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import { estimateChatMicros } from '../billing/estimate.js';
import type { ModelRoute } from '../config/types.js';
import { resolveModel } from '../engine/models.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';
import { translatorFor } from '../engine/translators.js';
import type { Call } from './call.js';
import { expectEventStream, readJsonObject } from './decode.js';
import type { Dialect } from './dialect.js';
import { send, type Sent } from './send.js';
import { settleAfterFailure, settleFromUsage } from './settle.js';
import { relayStream } from './stream.js';
import { usageReaderFor, type UsageReader } from './usage.js';
import { resolveInputs } from './inputs.js';
import { archiveOutputs } from './outputs.js';

interface ChatPlan {
  routes: ModelRoute[];
  translators: Map<ModelRoute, ChatTranslator>;
}

function contextFor(call: Call, route: ModelRoute, usage: () => UsageReader | undefined): TranslateContext {
  return {
    route,
    clientModel: call.body.model as string,
    requestId: call.req.id,
    request: call.body,
    usage: () => usage()?.counts(),
    costOf: (counts) => renderCost({ micros: tokenCostMicros(route.model.price, counts), currency: route.model.price.currency }),
  };
}

export function chatDialect(operation: string): Dialect<ChatPlan> {
  return {
    resolve(call) {
      const routes = resolveModel(call.config, call.body.model, 'chat');
      return { routes, translators: new Map(routes.map((r) => [r, translatorFor(call.config, call.dialect, r, operation)])) };
    },
    inputs: (call) => resolveInputs(call),
    estimate: (call, plan) => estimateChatMicros(plan.routes, call.body, call.bodyBytes),
    async execute(call, plan, charge: Charge) {
      let usage: UsageReader | undefined;
      const documents = new Map<ModelRoute, Record<string, unknown>>();
      let sent: Sent;
      try {
        // map request, route by route as the send stage reaches it (a translation refusal is a 400 before anything is sent), and send.
        sent = await send(call, plan.routes, (route) => {
          const translator = plan.translators.get(route)!;
          documents.set(route, translator.request(call.body, contextFor(call, route, () => usage)));
          return { operation: translator.operation, document: documents.get(route) };
        });
      } catch (err) {
        // A client that hung up may have left the upstream working: charge the reservation, as for an abandoned stream.
        await settleAfterFailure(charge, call.clientGone);
        throw err;
      }
      const translator = plan.translators.get(sent.route)!;
      usage = usageReaderFor(call.config, sent, translator.operation);
      const ctx = contextFor(call, sent.route, () => usage);
      const streamFlag = sent.operation.streamFlag;
      const streaming = sent.operation.response === 'sse' || (streamFlag !== undefined && documents.get(sent.route)![streamFlag] === true);
      try {
        if (streaming) {
          await expectEventStream(sent);
          return await relayStream(call, sent, translator.stream(ctx, call.body), usage, charge);
        }
        // decode and map the answer; it is sent while its settlement commits.
        const answer = await readJsonObject(sent);
        usage.fromAnswer(answer);
        usage.counts();
        // outputs: media the answer carries are archived before it is mapped and sent.
        await archiveOutputs(call, sent.operation.outputs?.answer, answer);
        const mapped = translator.response(answer, ctx);
        call.settling = settleFromUsage(charge, sent.route, usage, call.req.log);
        return mapped;
      } catch (err) {
        // An answer arrived (or the client left the upstream working): the upstream did the work.
        await settleAfterFailure(charge, true);
        throw err;
      }
    },
  };
}
