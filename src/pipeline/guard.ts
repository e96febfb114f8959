// The guardrails stage (docs/guardrails.md), between inputs and reserve: a call whose route or model has guardrails gets
// its input checked (redacted in place, or refused before anything is reserved, so a blocked input costs nothing but the
// checks' own calls), its JSON answer checked as it goes out, and its stream's mapper wrapped (relayStream asks
// call.guardStream). run.ts calls this only when the config declares guardrails; a call with no chain leaves here untouched.
import { forgetSourceText } from '../http/json-text.js';
import type { ModelRoute } from '../config/types.js';
import type { CheckContext, GuardrailVerdict, InternalRequest } from '../engine/guardrails.js';
import { recordOf } from '../request-logs/record.js';
import type { Call } from './call.js';

/** The name a call's guardrails hang on: the route or model the client named, else the model that serves it. */
function nameOf(call: Call, routes: readonly ModelRoute[]): string {
  const asked = call.body.model;
  return typeof asked === 'string' ? asked : routes[0].model.id;
}

/** What the call lends its whole-request checks: who it is, its end, its log, and internal calls on its behalf. */
function contextOf(call: Call, model: string): CheckContext {
  return {
    requestId: call.requestId,
    workspaceId: call.auth.workspaceId,
    model,
    signal: call.signal,
    log: call.log,
    internalCall(request: InternalRequest, signal: AbortSignal) {
      const calls = call.services.internalCalls;
      if (!calls) return Promise.reject(new Error('this gateway makes no internal calls'));
      return calls.run(call, request, signal);
    },
  };
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
  if (chain.stream) call.guardStream = (mapper) => chain.stream!(mapper, call.dialect, sink);
  if (chain.output) {
    const respond = call.respond;
    call.respond = (answer, status = 200) => respond.call(call, status === 200 ? chain.output!(answer, call.dialect, sink) : answer, status);
  }
  if (!chain.input) return undefined;
  const changed = chain.input(call.body, call.dialect, sink, contextOf(call, model));
  if (changed === true) forgetSourceText(call.body);
  else if (changed) return changed.then((c) => void (c && forgetSourceText(call.body)));
  return undefined;
}
