// One non-streamed chat answer: its usage read, decoded and mapped for the client, and settled as it goes out (the chat
// flow's answer stage, and each answer of a route that moves on from a content filter's, chat-filter.ts).
import type { Charge } from '../billing/meter.js';
import { clientOutputBound, usesServerTools } from '../billing/estimate.js';
import { isPassthrough } from '../engine/translators.js';
import type { Call } from '../pipeline/call.js';
import { readJsonObject } from '../pipeline/decode.js';
import type { Sent } from '../pipeline/send.js';
import { exceedsReservation, reportedCounts, SettlingAnswer, settleFromUsage } from '../pipeline/settle.js';
import { usageReaderFor, type UsageReader } from '../pipeline/usage.js';
import { archiveOutputs } from '../pipeline/outputs.js';
import { recordResponseId, recordTranslatedItems } from '../pipeline/provider-ids.js';
import type { ChatPlan } from './chat-context.js';

/** How the answer's usage is read: bounded by the model's limits, else by the request (its size, its output bound). */
export function chatUsageReader(call: Call, plan: ChatPlan, sent: Sent): UsageReader {
  // Usage beyond the model's limits (else the default bound, widened to the request) is impossible, unless the upstream
  // ran tools of its own (several calls in one).
  const choices = usesServerTools(call.body) ? null : Number.isInteger(call.body.n) && (call.body.n as number) > 1 ? (call.body.n as number) : 1;
  const request = sent.route.model.limits ? undefined : { bytes: call.bodyBytes, outputTokens: clientOutputBound(call.body) };
  const usage = usageReaderFor(call.config, sent, sent.operationName, choices, undefined, request);
  plan.mapped!.ctx.reader = usage;
  return usage;
}

/** Whether the answer's usage reads without a fault (reportedCounts settles and throws the fault when it does not). */
function countsSound(usage: UsageReader): boolean {
  try {
    usage.counts();
    return true;
  } catch {
    return false;
  }
}

/** The answer, decoded and mapped for the client; its usage read, its outputs archived, its charge not settled yet. */
export async function decodedAnswer(call: Call, plan: ChatPlan, sent: Sent, charge: Charge): Promise<{ mapped: unknown; usage: UsageReader }> {
  const translator = plan.translators[plan.routes.indexOf(sent.route)];
  const usage = chatUsageReader(call, plan, sent);
  const answer = await readJsonObject(sent);
  // Each step below that has nothing to do for this answer is skipped, not awaited: no promise, no turn of the event loop.
  if (call.dialect === 'openai-responses') await recordResponseId(call, answer);
  usage.fromAnswer(answer);
  if (!countsSound(usage)) await reportedCounts(call, charge, sent.route, usage);
  // outputs: media the answer carries are archived before it is mapped and sent.
  const outputs = sent.operation.outputs?.answer;
  if (outputs) await archiveOutputs(call, outputs, answer);
  return { mapped: translator.response(answer, plan.mapped!.ctx), usage };
}

/** One answer, decoded and mapped; it is sent while its settlement commits. */
export async function settledAnswer(call: Call, plan: ChatPlan, sent: Sent, charge: Charge): Promise<SettlingAnswer> {
  const { mapped, usage } = await decodedAnswer(call, plan, sent, charge);
  return answering(call, plan, sent, mapped, () => settleFromUsage(charge, sent.route, usage, call.log), exceedsReservation(charge, sent.route, usage));
}

/** `mapped` as the client's answer, settled by `settle`: a translated Responses answer's items are kept first. */
export async function answering(call: Call, plan: ChatPlan, sent: Sent, mapped: unknown, settle: () => Promise<void>, overReservation: boolean): Promise<SettlingAnswer> {
  if (!isPassthrough(plan.translators[plan.routes.indexOf(sent.route)])) await recordTranslatedItems(call, mapped);
  return new SettlingAnswer(mapped, settle(), overReservation);
}
