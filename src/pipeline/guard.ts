// The guardrails stage (docs/guardrails.md), between inputs and reserve: a call whose route or model has guardrails gets
// its input checked (redacted in place, or refused before anything is reserved, so a blocked input costs nothing but the
// checks' own calls), its JSON answer checked as it goes out, and its stream's mapper wrapped (relayStream asks
// call.guardStream). run.ts calls this only when the config declares guardrails; a call with no chain leaves here untouched.
import { forgetSourceText } from '../http/json-text.js';
import type { ModelRoute } from '../config/types.js';
import type { CheckContext, GuardrailVerdict, InternalAnswer, InternalRequest, RestoreVault } from '../engine/guardrails.js';
import { hideInCapture } from '../request-logs/bodies.js';
import { recordOf } from '../request-logs/record.js';
import type { Call } from './call.js';

/** What the guardrails stage reads of a call's plan: its routes, and a form's fields (a multipart request's `model`). */
export interface GuardedPlan {
  routes: readonly ModelRoute[];
  fields?: Record<string, unknown>;
}

/** The name a call's guardrails hang on: the route or model the client named (in its body or its form), else the model that serves it. */
function nameOf(call: Call, plan: GuardedPlan): string {
  const asked = call.body.model ?? plan.fields?.model;
  return typeof asked === 'string' ? asked : plan.routes[0].model.id;
}

/**
 * What the call lends its whole-request checks: who it is, its end, its log, and internal calls on its behalf. Its
 * signal and log are read only by a check that calls out: a pattern-only chain never makes the call's AbortSignal.
 */
class CallContext implements CheckContext {
  constructor(
    private readonly call: Call,
    readonly model: string,
  ) {}

  get requestId(): string {
    return this.call.requestId;
  }

  get workspaceId(): string {
    return this.call.auth.workspaceId;
  }

  get signal(): AbortSignal {
    return this.call.signal;
  }

  get log(): CheckContext['log'] {
    return this.call.log;
  }

  internalCall(request: InternalRequest, signal: AbortSignal): Promise<InternalAnswer> {
    const calls = this.call.services.internalCalls;
    if (!calls) return Promise.reject(new Error('this gateway makes no internal calls'));
    return calls.run(this.call, request, signal);
  }
}

/** Once the input is checked: a changed body's source text forgotten; values to restore keep the answer out of caches and captures. */
function afterInput(call: Call, changed: boolean, vault: RestoreVault | undefined): void {
  if (changed) forgetSourceText(call.body);
  if (!vault?.size) return;
  call.personalAnswer = true;
  hideInCapture(call.carrier, (text) => vault.hide(text));
}

/**
 * Sets up the call's guardrails. With `answerIsInput` (a transcript: the answer is the client's input told after the
 * fact) the input stage checks the answer's text when it comes (call.checkInputAnswer; plain redactions, nothing to
 * restore into) instead of the request; a streamed one is refused when an input guardrail blocks or redacts.
 */
export function guardCall(call: Call, plan: GuardedPlan, answerIsInput?: 'whole' | 'streamed'): Promise<void> | undefined {
  const model = nameOf(call, plan);
  const chain = call.config.guardrails?.chainFor(model, call.auth.guardrails);
  if (!chain) return undefined;
  const record = recordOf(call.carrier);
  const { metrics, guardrailEvents } = call.services;
  const sink = (verdict: GuardrailVerdict) => {
    record.guardrailVerdict(verdict);
    metrics?.countGuardrail(verdict.id, verdict.stage, verdict.verdict, verdict.ms / 1000);
    if (verdict.verdict === 'block') guardrailEvents?.blocked({ workspaceId: call.auth.workspaceId, keyId: call.auth.keyId, requestId: call.requestId, model, verdict });
  };
  const vault = chain.vault?.();
  let context: CallContext | undefined;
  const contextOf = () => (context ??= new CallContext(call, model));
  if (chain.outputCalls) call.checkAnswer = (answer) => chain.outputCalls!(answer, call.dialect, sink, contextOf());
  if (chain.stream) call.guardStream = (mapper) => chain.stream!(mapper, call.dialect, sink, vault);
  if (chain.output) {
    const respond = call.respond;
    call.respond = (answer, status = 200) => respond.call(call, status === 200 ? chain.output!(answer, call.dialect, sink, vault) : answer, status);
  }
  if (!chain.input) return undefined;
  if (answerIsInput === 'streamed') chain.refuseStreamedInput?.(sink);
  if (answerIsInput) {
    call.checkInputAnswer = (node) => chain.input!(node, call.dialect, sink, contextOf());
    return undefined;
  }
  // Checked already (a batch line read back from its vendor, checked when it was sent): the answer's checks only.
  if (call.inputChecked) return undefined;
  const changed = chain.input(call.body, call.dialect, sink, contextOf(), vault);
  if (typeof changed !== 'boolean') return changed.then((c) => afterInput(call, c, vault));
  afterInput(call, changed, vault);
  return undefined;
}
