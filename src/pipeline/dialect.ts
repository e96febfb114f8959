// What a client dialect contributes to the pipeline: how its request is read and resolved, what it may cost, how it is
// mapped for a route, and how the answer comes back. run.ts does everything else, the failure settlements included.
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';
import type { Outgoing, Sent } from './send.js';

export interface Dialect<Plan extends { routes: ModelRoute[] } = { routes: ModelRoute[] }, Read = undefined> {
  /** read: a body that is not plain JSON (a multipart form) is read within the request's limits, and returned. */
  read?(call: Call): Promise<Read>;
  /** resolve: the model id to its routes, each with what crosses to it (a pass-through or a declared translation). */
  resolve(call: Call, read: Read): Plan;
  /** inputs: what the body references, fetched and checked before anything is reserved or mapped. */
  inputs?(call: Call, plan: Plan): Promise<void> | void | undefined;
  /** estimate: the worst-case cost in micro-units, a true upper bound for an honest upstream. */
  estimate(call: Call, plan: Plan): number;
  /** How long the reservation holds if nobody settles it (a task's lifetime); the meter's default when absent. */
  reservationMs?(call: Call, plan: Plan): number;
  /**
   * map request: what goes to `route` (the `index`-th of the plan's routes), built as the send stage reaches it, so a
   * refusal to map is a 400 before anything is sent. The route that answers is the last one mapped.
   */
  request?(call: Call, plan: Plan, route: ModelRoute, index: number, charge: Charge): Outgoing;
  /**
   * decode and map the answer (or relay the stream), outputs, settle: the answer to send (a SettlingAnswer while its
   * charge still settles), or undefined when it was streamed. A throw here charges the reservation: the upstream worked.
   */
  answer?(call: Call, plan: Plan, sent: Sent, charge: Charge): Promise<unknown>;
  /**
   * A call that is not one exchange runs its own (evaluate's several, a task's background submit): the answer, a
   * SettlingAnswer, or a ChargeHandedOver when a task took the charge. Used instead of request and answer.
   */
  execute?(call: Call, plan: Plan, charge: Charge): Promise<unknown>;
}
