// What a client dialect contributes to the pipeline: how its request is read and resolved, what it may cost, how it is
// mapped for a route, and how the answer comes back. run.ts does everything else, the failure settlements included.
// A call is one of three shapes, and a dialect declares which by the members it has: one exchange (request, answer),
// several exchanges on one route whose usage is summed (converse), or no exchange while the client waits, the work
// handed over with its charge to what outlives the call (handOver).
import type { TokenUsage } from '../billing/cost.js';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';
import type { Outgoing, Sent } from './send.js';

/** The stages every call runs before anything is sent. */
interface Stages<Plan extends { routes: ModelRoute[] }, Read> {
  /** read: a body that is not plain JSON (a multipart form) is read within the request's limits, and returned. */
  read?(call: Call): Promise<Read>;
  /** resolve: the model id to its routes, each with what crosses to it (a pass-through or a declared translation). */
  resolve(call: Call, read: Read): Plan;
  /** inputs: what the body references, fetched and checked before anything is reserved or mapped. */
  inputs?(call: Call, plan: Plan): Promise<void> | void | undefined;
  /** estimate: the worst-case cost in micro-units, a true upper bound for an honest upstream. */
  estimate(call: Call, plan: Plan): number;
  /**
   * The answer's text is the client's input told after the fact (a transcript): input guardrails check it, not the
   * request; `streamed` when this request's answer streams (it cannot be checked before it goes out).
   */
  answerIsInput?(call: Call, plan: Plan): 'whole' | 'streamed';
  /** How long the reservation holds if nobody settles it (a task's lifetime); the meter's default when absent. */
  reservationMs?(call: Call, plan: Plan): number;
}

/** One exchange with the first route that answers (chat, images, every relayed family). */
export interface OneExchange<Plan extends { routes: ModelRoute[] }> {
  /**
   * map request: what goes to `route` (the `index`-th of the plan's routes), built as the send stage reaches it, so a
   * refusal to map is a 400 before anything is sent. The route that answers is the last one mapped.
   */
  request(call: Call, plan: Plan, route: ModelRoute, index: number, charge: Charge): Outgoing;
  /**
   * decode and map the answer (or relay the stream), outputs, settle: the answer to send (a SettlingAnswer while its
   * charge still settles), or undefined when it was streamed. A throw here charges the reservation: the upstream worked.
   */
  answer(call: Call, plan: Plan, sent: Sent, charge: Charge): Promise<unknown>;
}

/** One exchange of a conversation: `document` sent to the plan's first route as `operation`, its JSON answer back. */
export type Exchange = (operation: string, document: unknown) => Promise<Record<string, unknown>>;

/** What a conversation's exchanges cost, once settled. */
export interface Spent {
  usage: Required<TokenUsage>;
  costMicros: number;
}

/** How a conversation ended: the answer, made once its cost is known, or the failure that ends the call (after its exchanges were charged). */
export interface Conversation {
  failure?: Error;
  answer(spent: Spent): unknown;
}

/** Several exchanges on the plan's first route (evaluate's questions): their usage is summed and settled once. */
export interface SeveralExchanges<Plan extends { routes: ModelRoute[] }> {
  /** map each request and read each answer; the pipeline sends, decodes and meters every exchange. */
  converse(call: Call, plan: Plan, exchange: Exchange): Promise<Conversation>;
}

/** No exchange while the client waits: the work and its charge go to what outlives the call (a task row and its runner). */
export interface HandOver<Plan extends { routes: ModelRoute[] }> {
  /** Hands the charge over (from here on, its new owner settles or releases it) and returns the answer. A throw releases the charge. */
  handOver(call: Call, plan: Plan, charge: Charge): Promise<unknown>;
}

export type Flow<Plan extends { routes: ModelRoute[] } = { routes: ModelRoute[] }, Read = undefined> = Stages<Plan, Read> &
  (OneExchange<Plan> | SeveralExchanges<Plan> | HandOver<Plan>);
