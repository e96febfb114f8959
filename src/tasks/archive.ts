// Archives a completed task's result into the file store, streamed and capped (tasks.archiveMaxBytes): from an authenticated
// download operation (the pipeline's send stage), a URL through the remote-fetch guard, or base64, by the pipeline's one
// archive routine (pipeline/archive.ts), which tries a transient failure again until the task's deadline. Never throws.
import type { Readable } from 'node:stream';
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { archiveResult, PermanentFailure, resultSource, type ResultBytes } from '../pipeline/archive.js';
import { detachedCall, type CallCore } from '../pipeline/core.js';
import { send } from '../pipeline/send.js';
import type { Deadline } from '../net/deadline.js';
import type { TaskRunnerDeps } from './deps.js';
import { openDownloadUrl, resultStep } from './result-step.js';
import type { TaskScope } from './steps.js';
import type { CompiledTask } from './spec.js';
import type { TaskRow } from './store.js';

export interface ArchiveOutcome {
  fileId?: string;
  status: 'archived' | 'failed';
  providerUrl?: string;
  error?: string;
  /** How many times the bytes were asked for. */
  attempts?: number;
  /** The scope usage is read in: the completed answer, the task and the result step's answer. */
  scope?: { answer: unknown; task: TaskScope; step?: unknown };
}

const httpsUrl = (value: unknown): string | undefined => (typeof value === 'string' && /^https?:\/\//i.test(value) && value.length <= 4096 && URL.canParse(value) ? value : undefined);

/**
 * Each download attempt is one call of the pipeline's send stage: the channel's deadline, retries and breaker. A download
 * operation (its path), or an absolute URL: with the key only on the channel's origin (result-step.ts).
 */
function downloadSource(snapshot: Snapshot, remote: TaskRunnerDeps['remote'], route: ModelRoute, from: { operation?: string; url?: string }, row: TaskRow, maxBytes: number, signal: AbortSignal): { open(): Promise<ResultBytes>; inline?: boolean; end(): void } {
  let call: CallCore | undefined;
  return {
    async open() {
      call?.dispose();
      call = detachedCall(snapshot, signal);
      if (from.url) return openDownloadUrl(call, remote, route, new URL(from.url), maxBytes);
      const { response } = await send(call, [route], () => ({ operation: from.operation!, pathScope: { upstream_id: row.upstream_id } }));
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        await response.body.dump().catch(() => undefined);
        throw new PermanentFailure(`the result is larger than the ${maxBytes}-byte archive limit`);
      }
      return response.body as Readable;
    },
    end: () => call?.dispose(),
  };
}

export async function archiveTaskResult(services: Pick<TaskRunnerDeps, 'remote' | 'db' | 'blobs' | 'files'>, snapshot: Snapshot, route: ModelRoute, task: CompiledTask, row: TaskRow, polled: { answer: unknown; task: TaskScope }, maxBytes: number, deadline: Deadline, purpose: string): Promise<ArchiveOutcome> {
  const stepped = await resultStep(snapshot, route, task, row, polled, deadline);
  if ('error' in stepped) return { status: 'failed', error: stepped.error };
  const scope = stepped.scope;
  const providerUrl = task.url ? httpsUrl(task.url(scope)) : undefined;
  const download = task.spec.result.download;
  const downloadUrl = task.downloadUrl ? httpsUrl(task.downloadUrl(scope)) : undefined;
  const base64 = !download && !providerUrl ? task.base64?.(scope) : undefined;
  const fetched = download?.operation || downloadUrl ? downloadSource(snapshot, services.remote, route, { operation: download?.operation, url: downloadUrl }, row, maxBytes, deadline.signal) : undefined;
  const source = fetched ?? resultSource(services.remote, { url: providerUrl, base64 }, deadline.signal);
  if (!source) return { status: 'failed', error: 'the result carries neither a URL nor base64 data', scope };
  try {
    const labels = { filename: `${task.spec.kind}-${row.id}`, purpose, model: row.model, taskId: row.id };
    // The dashboard's Files page shows what made it (the model, the task).
    const outcome = await archiveResult(services, { workspaceId: row.workspace_id, maxBytes, ...labels, open: source.open, inline: source.inline, deadline });
    if (outcome.status === 'archived') return { fileId: outcome.fileId, status: 'archived', attempts: outcome.attempts, scope };
    // A URL the guard refuses (a private address, a redirect to one) is never shown: the task then fails, unbilled.
    const shown = providerUrl && !outcome.refusal && !services.remote.check(new URL(providerUrl)) ? providerUrl : undefined;
    return { status: 'failed', providerUrl: shown, error: outcome.error, attempts: outcome.attempts, scope };
  } finally {
    fetched?.end();
  }
}
