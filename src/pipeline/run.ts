// The one path every billed upstream call takes, whatever carried the request: read -> resolve -> inputs -> estimate ->
// reserve -> execute; the answer goes to the call, and the Charge closes last (unless a task took it over).
import type { Call } from './call.js';
import type { Dialect } from './dialect.js';
import { reserve } from './reserve.js';
import { answerBeforeCommit, ChargeHandedOver, SettlingAnswer } from './settle.js';

/** Runs one call through `dialect`'s stages; throws what a stage threw (the transport answers it in the call's dialect). */
export async function runCall(call: Call, dialect: Dialect<any, any>): Promise<void> {
  // Stages with nothing to do cost no turn of the event loop.
  const read = dialect.read ? await dialect.read(call) : undefined;
  const plan = dialect.resolve(call, read);
  const inputs = dialect.inputs?.(call, plan);
  if (inputs) await inputs;
  const charge = await reserve(call, plan.routes[0], dialect.estimate(call, plan), dialect.reservationMs?.(call, plan));
  let handedOver = false;
  try {
    const result = await dialect.execute(call, plan, charge);
    if (result instanceof ChargeHandedOver) {
      // The charge is the task's now: its runner settles or releases it, once, however long that takes.
      handedOver = true;
      call.respond(result.answer);
    } else if (!(result instanceof SettlingAnswer)) {
      // undefined: the answer was streamed.
      if (result !== undefined) call.respond(result);
    } else if (!answerBeforeCommit(call)) {
      await result.settled;
      call.respond(result.answer);
    } else {
      // The client never waits for the ledger commit where the store batches it (the reservation holds the cap until it lands).
      call.respond(result.answer);
      call.dispose();
      await result.settled.catch((err: unknown) => call.log.error({ err }, 'the answer was sent but its charge could not be recorded'));
    }
  } finally {
    // Released unless settled: every exit, thrown or returned, ends the charge exactly once.
    if (!handedOver) await charge.close();
  }
}
