// What a client dialect contributes to the pipeline: how its request is read and resolved, what it may cost, and how it is carried out.
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';

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
   * map request, send, decode and map response, outputs, settle: the answer to send (a SettlingAnswer while its charge
   * still settles, a ChargeHandedOver when a task took the charge), or undefined when it was streamed.
   */
  execute(call: Call, plan: Plan, charge: Charge): Promise<unknown>;
}
