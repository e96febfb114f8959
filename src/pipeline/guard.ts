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

/** The name a call's guardrails hang on: the route or model the client named, else the model that serves it. */
function nameOf(call: Call, routes: readonly ModelRoute[]): string {
  const asked = call.body.model;
  return typeof asked === 'string' ? asked : routes[0].model.id;
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

export function guardCall(call: Call, routes: readonly ModelRoute[]): Promise<void> | undefined {
  const model = nameOf(call, routes);
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
  if (chain.stream) call.guardStream = (mapper) => chain.stream!(mapper, call.dialect, sink, vault);
  if (chain.output) {
    const respond = call.respond;
    call.respond = (answer, status = 200) => respond.call(call, status === 200 ? chain.output!(answer, call.dialect, sink, vault) : answer, status);
  }
  if (!chain.input || call.inputChecked) return undefined;
  const changed = chain.input(call.body, call.dialect, sink, new CallContext(call, model), vault);
  if (typeof changed !== 'boolean') return changed.then((c) => afterInput(call, c, vault));
  afterInput(call, changed, vault);
  return undefined;
}
