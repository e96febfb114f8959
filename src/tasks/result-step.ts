// After a task completes: the result step (one more call whose answer says where the result is, e.g. a file id looked up
// for its download URL), and the download of an absolute URL, credentialed only on the channel's own origin.
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelRoute } from '../config/types.js';
import type { Deadline } from '../net/deadline.js';
import type { RemoteFetcher } from '../net/remote-fetch.js';
import { detachedCall, type CallCore } from '../pipeline/core.js';
import { readJsonObject } from '../pipeline/decode.js';
import { send } from '../pipeline/send.js';
import { backoffMs, isTransient, PermanentFailure } from '../pipeline/archive.js';
import type { Snapshot } from '../engine/runtime.js';
import { credentialedDownload } from './absolute.js';
import type { CompiledTask } from './spec.js';
import { refusalOf, type TaskScope } from './steps.js';

const MAX_REDIRECTS = 3;

type ResultScope = { answer: unknown; task: TaskScope; step?: unknown };

/** The values of `result.step.params` for the step's path: an object of scalars, or a fault of the protocol. */
function stepParams(task: CompiledTask, scope: ResultScope): Record<string, unknown> {
  const params = task.stepParams?.(scope) ?? {};
  if (typeof params !== 'object' || Array.isArray(params)) throw new PermanentFailure('result.step.params must yield an object');
  return params as Record<string, unknown>;
}

/**
 * Runs the task's result step, if it has one, tried again (unreachable, 408, 425, 429, 5xx, a refusal marked retry) with
 * back-off until the archive's deadline. Its answer joins the scope the result mappings read as `step`.
 */
export async function resultStep(snapshot: Snapshot, route: ModelRoute, task: CompiledTask, row: { upstream_id: string | null }, polled: { answer: unknown; task: TaskScope }, deadline: Deadline): Promise<{ scope: ResultScope } | { error: string }> {
  const spec = task.spec.result.step;
  const base: ResultScope = { answer: polled.answer, task: polled.task };
  if (!spec) return { scope: base };
  let reason = 'the result step did not answer';
  for (let attempt = 1; ; attempt++) {
    const call = detachedCall(snapshot, deadline.signal);
    try {
      const pathScope = { upstream_id: row.upstream_id, ...stepParams(task, base) };
      const step = await readJsonObject(await send(call, [route], () => ({ operation: spec.operation, pathScope, headers: spec.headers })));
      const refusal = refusalOf(task, step, polled.task);
      if (!refusal) return { scope: { ...base, step } };
      reason = `the result step was refused: ${refusal.code}: ${refusal.message}`;
      if (!refusal.retry) return { error: reason.slice(0, 300) };
    } catch (err) {
      reason = `the result step failed: ${(err as Error).message}`;
      if (err instanceof PermanentFailure || !isTransient(err)) return { error: reason.slice(0, 300) };
    } finally {
      call.dispose();
    }
    try {
      await sleep(backoffMs(attempt), undefined, { signal: deadline.signal });
    } catch {
      return { error: `${reason}, and the task deadline passed`.slice(0, 300) };
    }
  }
}

/**
 * Opens the bytes at an absolute URL: with the channel's credential through its pool when the URL is on the channel's own
 * origin (redirects on that origin followed too), else through the remote-fetch guard without it, as is a redirect to
 * another host.
 */
export async function openDownloadUrl(call: CallCore, remote: RemoteFetcher, route: ModelRoute, url: URL, maxBytes: number): Promise<Readable> {
  let current = url;
  for (let hop = 0; ; hop++) {
    if (!credentialedDownload(route, current)) return (await remote.fetch(current.href, call.signal)).body as Readable;
    const originPath = `${current.pathname}${current.search}`;
    const { response } = await send(call, [route], () => ({ operation: '', originPath }));
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && location) {
      await response.body.dump().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw new PermanentFailure(`the result download was redirected more than ${MAX_REDIRECTS} times`);
      current = new URL(String(location), current);
      continue;
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body.dump().catch(() => undefined);
      throw new PermanentFailure(`the result is larger than the ${maxBytes}-byte archive limit`);
    }
    return response.body as Readable;
  }
}
