// Content-filter failover (a route whose failover.on lists content_filter, docs/routing.md "Failover"): a chat answer a
// content filter stopped (finish_reason content_filter, stop_reason refusal, a Responses answer incomplete for
// content_filter) is not the client's while the route has a target after the one that gave it: the request goes on,
// mapped and sent like the first. The last answer is the client's (a filtered one too, when no target is left or the
// next one fails); every answer is charged what its upstream reported, on one ledger row.
import type { Charge } from '../billing/meter.js';
import { tokensForBytes } from '../billing/estimate.js';
import { contentFiltered } from '../engine/routing/content-filter.js';
import type { Call } from '../pipeline/call.js';
import { send, type Sent } from '../pipeline/send.js';
import { exceedsReservation, settleAttempts, settleFromUsage, type SettlingAnswer } from '../pipeline/settle.js';
import type { UsageReader } from '../pipeline/usage.js';
import { answering, decodedAnswer } from './chat-answer.js';
import { mapChatRequest, type ChatPlan } from './chat-context.js';

interface Answered {
  sent: Sent;
  mapped: unknown;
  usage: UsageReader;
}

/** The answer of a routed call whose route moves on from a content filter's: the first one no filter stopped, else the last. */
export async function answerPastFilters(call: Call, plan: ChatPlan, first: Sent, charge: Charge): Promise<SettlingAnswer> {
  const answers: Answered[] = [];
  for (let sent = first; ; ) {
    answers.push({ sent, ...(await decodedAnswer(call, plan, sent, charge)) });
    const rest = plan.routes.slice(plan.routes.indexOf(sent.route) + 1);
    if (!rest.length || !contentFiltered(call.dialect, answers[answers.length - 1].mapped)) break;
    call.log.info({ channel: sent.route.channel.id, model: sent.route.model.id }, 'a content filter stopped the answer; the route moves on to its next target');
    try {
      sent = await send(call, rest, (route) => mapChatRequest(call, plan, route, plan.routes.indexOf(route), charge));
    } catch (err) {
      call.log.warn({ err }, 'no target answered after a content filter; the filtered answer stands');
      break;
    }
    if (answers[answers.length - 1].sent.attempt) answers[answers.length - 1].sent.attempt!.broken = 'content_filter';
    call.header('x-gateway-target', sent.route.via!.target);
  }
  return settled(call, plan, charge, answers);
}

/** The last answer, the charge settled over every answer: each one's reported usage (else its input, estimated). */
function settled(call: Call, plan: ChatPlan, charge: Charge, answers: readonly Answered[]): Promise<SettlingAnswer> {
  const last = answers[answers.length - 1];
  if (answers.length === 1) {
    return answering(call, plan, last.sent, last.mapped, () => settleFromUsage(charge, last.sent.route, last.usage, call.log), exceedsReservation(charge, last.sent.route, last.usage));
  }
  const inputEstimate = tokensForBytes(call.bodyBytes);
  const settle = async () => {
    const costs = await settleAttempts(charge, answers.map((a) => ({ route: a.sent.route, usage: a.usage, inputEstimate })), call.log);
    if (costs) answers.forEach((a, i) => a.sent.attempt && (a.sent.attempt.costMicros = costs[i]));
  };
  // Several answers may cost more than the reservation: the answer waits for the commit.
  return answering(call, plan, last.sent, last.mapped, settle, true);
}
