// What a client dialect contributes to the pipeline: how its request resolves, what it may cost, and how it is carried out.
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';

export interface Dialect<Plan extends { routes: ModelRoute[] } = { routes: ModelRoute[] }> {
  /** A body that is not JSON (a multipart form) is read into `call.body` first, within the request's limits. */
  read?(call: Call): Promise<void>;
  /** resolve: the model id to its routes, each with what crosses to it (a pass-through or a declared translation). */
  resolve(call: Call): Plan;
  /** inputs: what the body references, fetched and checked before anything is reserved or mapped. */
  inputs?(call: Call, plan: Plan): Promise<void> | void | undefined;
  /** estimate: the worst-case cost in micro-units, a true upper bound for an honest upstream. */
  estimate(call: Call, plan: Plan): number;
  /**
   * map request, send, decode and map response, outputs, settle: the answer to send (a SettlingAnswer while its charge
   * still settles), or undefined when it was streamed.
   */
  execute(call: Call, plan: Plan, charge: Charge): Promise<unknown>;
}
