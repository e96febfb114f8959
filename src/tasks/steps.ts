// What a task does with the upstream's answers besides reading its status: the success check of a 2xx answer
// (`failure`), the operation chosen by an expression (`choose`), what later steps read about the task (`task` in their
// scope), and what the submit answer keeps for them (`save`). Data only: nothing here knows a vendor.
import type { ModelRoute } from '../config/types.js';
import { GatewayError } from '../base/errors.js';
import type { TaskParams } from './cost.js';
import type { CompiledTask } from './spec.js';
import { MAX_TEXT } from './answer-text.js';

/** The most `save` may keep on the task, as JSON. */
export const SAVED_LIMIT = 4096;
const text = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : typeof value === 'number' ? String(value) : fallback).slice(0, MAX_TEXT);

/** `task` in the scope of poll and result mappings: what the gateway stored about the task. */
export interface TaskScope {
  upstream_id: string | null;
  operation: string;
  prompt: string;
  seconds: number | null;
  size: string | null;
  saved: Record<string, unknown>;
}

export function taskScope(task: CompiledTask, row: { upstream_id: string | null; params: string }): TaskScope {
  const params = JSON.parse(row.params) as TaskParams;
  return {
    upstream_id: row.upstream_id,
    operation: params.operation ?? task.spec.submit.operation,
    prompt: params.prompt,
    seconds: params.seconds ?? null,
    size: params.size ?? null,
    saved: params.saved ?? {},
  };
}

/** The upstream refused in an HTTP 2xx answer (`failure` yielded something): why, and whether asking again may help. */
export interface Refusal {
  code: string;
  message: string;
  retry: boolean;
}

/** The task's success check on one 2xx answer: undefined when it is a success. */
export function refusalOf(task: CompiledTask, answer: unknown, scope: TaskScope): Refusal | undefined {
  if (!task.failure) return undefined;
  const out = task.failure({ answer, task: scope });
  if (out === null || out === undefined || out === false || out === '') return undefined;
  const said = (typeof out === 'object' ? out : { message: out }) as { code?: unknown; message?: unknown; retry?: unknown };
  return {
    code: text(said.code, 'upstream_refused').replace(/[^\w.:-]/g, '_'),
    message: text(said.message, 'the upstream refused the request'),
    retry: said.retry === true || said.retry === 'true',
  };
}

/** The operation `chosen` names (null or empty: `fallback`), when the route's protocol declares it; a fault of the protocol otherwise. */
export function declaredOperation(route: ModelRoute, chosen: unknown, fallback: string, where: string): string {
  if (chosen === null || chosen === undefined || chosen === '') return fallback;
  if (typeof chosen === 'string' && Object.hasOwn(route.protocol.operations, chosen)) return chosen;
  const shown = JSON.stringify(chosen)?.slice(0, 80) ?? 'nothing';
  throw new GatewayError('task_misconfigured', 500, 'server_error', `${route.protocol.file ?? route.protocol.id} ${where} chose operation ${shown}, which protocol "${route.protocol.id}" does not declare`, {}, false);
}

/** The operation that creates the task: `submit.choose` over the request's scope, else `submit.operation`. */
export const submitOperation = (task: CompiledTask, route: ModelRoute, scope: { model: unknown; body: unknown }) =>
  declaredOperation(route, task.chooseSubmit?.(scope), task.spec.submit.operation, `/tasks/${task.name}/submit/choose`);

/** The operation that reads the task: `poll.choose` over the task, else `poll.operation`. */
export const pollOperation = (task: CompiledTask, route: ModelRoute, scope: TaskScope) =>
  declaredOperation(route, task.choosePoll?.({ task: scope }), task.spec.poll.operation, `/tasks/${task.name}/poll/choose`);

/** What `submit.save` keeps from the submit answer (an object within SAVED_LIMIT), or a reason it cannot be kept. */
export function savedOf(task: CompiledTask, answer: unknown): { saved?: Record<string, unknown>; problem?: string } {
  if (!task.save) return {};
  const saved = task.save({ answer });
  if (saved === null || saved === undefined) return {};
  if (typeof saved !== 'object' || Array.isArray(saved)) return { problem: 'submit.save must yield an object' };
  if (JSON.stringify(saved).length > SAVED_LIMIT) return { problem: `what submit.save keeps is over ${SAVED_LIMIT} bytes` };
  return { saved: saved as Record<string, unknown> };
}
