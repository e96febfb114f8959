// The one path every billed upstream call takes, whatever carried the request: read -> resolve -> inputs -> guardrails
// (only where the config declares any) -> estimate -> reserve -> map request -> send -> decode or stream -> outputs ->
// settle; the answer goes to the call, and the Charge closes last (unless a task took it over). The flow says only what differs (pipeline/flow.ts).
import type { ModelRoute } from '../config/types.js';
import { markStage } from '../http/stages.js';
import { responseCacheOf } from './cache-stage.js';
import type { Call } from './call.js';
import { converse } from './conversation.js';
import { guardCall } from './guard.js';
import type { Charge } from '../billing/charge.js';
import type { Flow, OneExchange } from './flow.js';
import { reserve } from './reserve.js';
import { send, type Sent } from './send.js';
import { answerBeforeCommit, SettlingAnswer, settleAfterFailure } from './settle.js';

/**
 * Runs one call through `dialect`'s stages, and ends the call (call.dispose) when it is done; throws what a stage threw
 * (the transport answers it in the call's dialect). The only async frame between the route and the work: stages with
 * nothing to do cost no turn of the event loop. A call whose route caches may be answered from the response cache
 * before anything is reserved (docs/caching.md).
 */
export async function runCall(call: Call, dialect: Flow<any, any>): Promise<void> {
  try {
    const read = dialect.read ? await dialect.read(call) : undefined;
    const plan = dialect.resolve(call, read);
    const inputs = dialect.inputs?.(call, plan);
    if (inputs) await inputs;
    const guarded = call.config.guardrails && guardCall(call, plan, dialect.answerIsInput?.(call, plan));
    if (guarded) await guarded;
    markStage('resolved');
    const cached = responseCacheOf(call)?.ticket(call, plan.routes);
    const served = cached?.serve(call);
    if (served === true || (served !== undefined && served !== false && (await served))) return;
    const charge = await reserve(call, plan.routes[0], dialect.estimate(call, plan), dialect.reservationMs?.(call, plan));
    markStage('reserved');
    let handedOver = false;
    try {
      let result: unknown;
      if ('handOver' in dialect) {
        // The charge is the task's now: its runner settles or releases it, once, however long that takes.
        result = await dialect.handOver(call, plan, charge);
        handedOver = true;
      } else if ('converse' in dialect) {
        result = await converse(call, plan, charge, dialect);
      } else {
        result = await exchange(call, dialect, plan, charge);
      }
      if (!(result instanceof SettlingAnswer)) {
        // undefined: the answer was streamed.
        if (result !== undefined) call.respond(call.checkAnswer ? await call.checkAnswer(result) : result);
      } else if (!answerBeforeCommit(call) || result.overReservation) {
        const answer = call.checkAnswer ? await call.checkAnswer(result.answer) : result.answer;
        await result.settled;
        call.respond(answer);
      } else {
        // The client never waits for the ledger commit where the store batches it (the reservation holds the cap until it
        // lands), and neither does this frame: waiting here kept the call (request, reply, answer) of every request of
        // the batch window alive through the young generation's collections. The charge ended when its settlement was
        // queued; only the log waits for the commit.
        markStage('decoded');
        call.respond(call.checkAnswer ? await call.checkAnswer(result.answer) : result.answer);
        call.dispose();
        logIfUnrecorded(result.settled, call.log);
      }
    } finally {
      // Released unless settled: every exit, thrown or returned, ends the charge exactly once.
      if (!handedOver) await charge.close();
    }
  } finally {
    call.dispose();
  }
}


/** Logs a settlement of an answer already sent that could not be recorded; holds the log alone, not the call. */
function logIfUnrecorded(settled: Promise<void>, log: Call['log']): void {
  settled.catch((err: unknown) => log.error({ err }, 'the answer was sent but its charge could not be recorded'));
}

/**
 * One exchange, in the call's frame: map and send (a failure before an answer releases the charge, unless the client left
 * the upstream working), then the flow's answer (a failure once an answer arrived charges the reservation).
 */
async function exchange<Plan extends { routes: ModelRoute[] }>(call: Call, dialect: OneExchange<Plan>, plan: Plan, charge: Charge): Promise<unknown> {
  let sent: Sent;
  try {
    sent = await send(call, plan.routes, (route, index) => dialect.request(call, plan, route, index, charge));
  } catch (err) {
    await settleAfterFailure(charge, call.clientGone);
    throw err;
  }
  markStage('upstream answered');
  if (sent.route.via) call.header('x-gateway-target', sent.route.via.target);
  try {
    return await dialect.answer(call, plan, sent, charge);
  } catch (err) {
    await settleAfterFailure(charge, true);
    throw err;
  }
}
