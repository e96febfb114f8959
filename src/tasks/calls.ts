// A task's submit answer and its polls, as the protocol's data says: the step's own headers, the operation chosen by an
// expression, an absolute polling URL on an accepted host, the success check of a 2xx answer, and what is saved for later.
import type { ModelRoute } from '../config/types.js';
import type { CallCore } from '../pipeline/core.js';
import { readJsonObject } from '../pipeline/decode.js';
import { absoluteUrl, pollTarget, sendTaskCall } from './absolute.js';
import type { CompiledTask } from './spec.js';
import { pollOperation, refusalOf, savedOf, taskScope, type Refusal, type TaskScope } from './steps.js';

/** What the submit answer says: the upstream task id and what later steps need, or why the task fails (nothing billed). */
export type SubmitOutcome = { upstreamId: string; saved?: Record<string, unknown> } | { code: string; message: string };

export function readSubmitAnswer(task: CompiledTask, route: ModelRoute, row: { upstream_id: string | null; params: string }, answer: unknown): SubmitOutcome {
  const refusal = refusalOf(task, answer, taskScope(task, row));
  if (refusal) return { code: refusal.code, message: refusal.message };
  const upstreamId = task.id({ answer });
  if ((typeof upstreamId !== 'string' && typeof upstreamId !== 'number') || String(upstreamId).length === 0 || String(upstreamId).length > 256) {
    return { code: 'upstream_malformed', message: `channel "${route.channel.id}" answered without a task id` };
  }
  const { saved, problem } = savedOf(task, answer);
  if (problem) return { code: 'upstream_malformed', message: `channel "${route.channel.id}" answered a task the gateway cannot keep: ${problem}` };
  return { upstreamId: String(upstreamId), saved };
}

/** One poll: the answer and the task scope its mappings read, or the upstream's refusal in a 2xx answer. Upstream errors throw. */
export async function pollOnce(call: CallCore, task: CompiledTask, route: ModelRoute, row: { upstream_id: string | null; params: string }): Promise<{ answer: unknown; scope: TaskScope; refusal?: Refusal }> {
  const scope = taskScope(task, row);
  const operation = pollOperation(task, route, scope);
  const url = absoluteUrl(task.pollUrl?.({ task: scope }), `the polling URL of task "${task.name}"`);
  const target = url ? pollTarget(route, url, task.spec.poll.hosts) : undefined;
  const outgoing = { operation, pathScope: { upstream_id: row.upstream_id }, headers: task.spec.poll.headers, originPath: target && 'originPath' in target ? target.originPath : undefined };
  const answer = await readJsonObject(await sendTaskCall(call, route, outgoing, target && 'foreign' in target ? target.foreign : undefined));
  return { answer, scope, refusal: refusalOf(task, answer, scope) };
}
