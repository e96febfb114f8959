// Archives a completed task's result into the file store, streamed and capped (tasks.archiveMaxBytes): from an authenticated
// download operation, a URL through the remote-fetch guard, or base64. Never throws: a failure is archive_status "failed".
// The whole archive ends by its deadline (a timer, see net/deadline.ts); a transient failure (unreachable, too slow for one
// attempt, 408, 425, 429, 5xx, a body that breaks off) is tried again with back-off until that deadline.
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../runtime.js';
import { detachedCall, type CallCore } from '../pipeline/core.js';
import { send } from '../pipeline/send.js';
import { GatewayError } from '../errors.js';
import { base64Chunks, storeFile } from '../files/index.js';
import type { Deadline } from '../net/deadline.js';
import { backoffMs, isTransient, PermanentFailure } from './faults.js';
import { openDownloadUrl, resultStep } from './result-step.js';
import type { TaskScope } from './steps.js';
import type { TaskRunnerDeps } from './deps.js';
import type { CompiledTask } from './spec.js';
import type { TaskRow } from './store.js';

const httpsUrl = (value: unknown): string | undefined => (typeof value === 'string' && /^https?:\/\//i.test(value) && value.length <= 4096 ? value : undefined);

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


export async function archiveTaskResult(services: Pick<TaskRunnerDeps, 'remote' | 'db' | 'blobs' | 'files'>, snapshot: Snapshot, route: ModelRoute, task: CompiledTask, row: TaskRow, polled: { answer: unknown; task: TaskScope }, maxBytes: number, deadline: Deadline): Promise<ArchiveOutcome> {
  const stepped = await resultStep(snapshot, route, task, row, polled, deadline);
  if ('error' in stepped) return { status: 'failed', error: stepped.error };
  const scope = stepped.scope;
  const providerUrl = task.url ? httpsUrl(task.url(scope)) : undefined;
  const spec = task.spec.result.download;
  const download = spec?.operation ? { operation: spec.operation } : undefined;
  const downloadUrl = task.downloadUrl ? httpsUrl(task.downloadUrl(scope)) : undefined;
  const base64 = !download && !downloadUrl && !providerUrl ? task.base64?.(scope) : undefined;
  if (!download && !downloadUrl && !providerUrl && (typeof base64 !== 'string' || !base64)) return { status: 'failed', error: 'the result carries neither a URL nor base64 data', scope };
  const signal = deadline.signal;

  // Each download attempt is one call of the pipeline's send stage: the channel's deadline, retries and breaker.
  let call: CallCore | undefined;
  const open = async (): Promise<Readable | Iterable<Uint8Array>> => {
    if (download) {
      call?.dispose();
      call = detachedCall(snapshot, signal);
      const { response } = await send(call, [route], () => ({ operation: download.operation, pathScope: { upstream_id: row.upstream_id } }));
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        await response.body.dump().catch(() => undefined);
        throw new PermanentFailure(`the result is larger than the ${maxBytes}-byte archive limit`);
      }
      return response.body as Readable;
    }
    if (downloadUrl) {
      call?.dispose();
      call = detachedCall(snapshot, signal);
      return openDownloadUrl(call, services.remote, route, new URL(downloadUrl), maxBytes);
    }
    if (providerUrl) return (await services.remote.fetch(providerUrl, signal)).body;
    return base64Chunks(base64 as string);
  };

  try {
    return { ...(await archiveWithRetries(services, row, task, open, !!base64, maxBytes, deadline, providerUrl)), scope };
  } finally {
    call?.dispose();
  }
}

async function archiveWithRetries(services: Pick<TaskRunnerDeps, 'db' | 'blobs' | 'files'>, row: TaskRow, task: CompiledTask, open: () => Promise<Readable | Iterable<Uint8Array>>, inline: boolean, maxBytes: number, deadline: Deadline, providerUrl?: string): Promise<ArchiveOutcome> {
  const signal = deadline.signal;
  for (let attempt = 1; ; attempt++) {
    try {
      const file = await storeFile(services, {
        workspaceId: row.workspace_id,
        stream: await open(),
        maxBytes,
        filename: `${task.spec.kind}-${row.id}`,
        purpose: task.spec.kind === 'video' ? 'video_generation' : 'image_generation',
        source: 'generated',
        // The dashboard's Files page shows what made it.
        model: row.model,
        taskId: row.id,
      });
      return { fileId: file.id, status: 'archived', attempts: attempt };
    } catch (err) {
      const again = !(err instanceof PermanentFailure) && !inline && isTransient(err) && !signal.aborted;
      if (again) {
        try {
          await sleep(backoffMs(attempt), undefined, { signal });
          continue;
        } catch {
          // The deadline passed while waiting: the last failure stands.
        }
      }
      const reason = deadline.expired ? 'the result could not be fetched before the task deadline' : err instanceof GatewayError || err instanceof PermanentFailure ? err.message : 'the result could not be stored';
      return { status: 'failed', providerUrl, error: reason.slice(0, 300), attempts: attempt };
    }
  }
}
