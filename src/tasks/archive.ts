// Archives a completed task's result into the file store, streamed and capped (tasks.archiveMaxBytes): from an authenticated
// download operation, a URL through the remote-fetch guard, or base64. Never throws: a failure is archive_status "failed".
import type { Readable } from 'node:stream';
import type { ModelRoute } from '../config/types.js';
import type { Upstreams } from '../engine/upstream.js';
import { GatewayError } from '../errors.js';
import { storeFile } from '../files/index.js';
import type { TaskRunnerDeps } from './deps.js';
import type { CompiledTask } from './spec.js';
import type { TaskRow } from './store.js';

export interface ArchiveOutcome {
  fileId?: string;
  status: 'archived' | 'failed';
  providerUrl?: string;
  error?: string;
}

/** Base64 decoded a slice at a time (a multiple of 4 characters), so a large result never sits in memory twice. */
function* base64Chunks(text: string, charsPerChunk = 1 << 20): Generator<Uint8Array> {
  for (let i = 0; i < text.length; i += charsPerChunk) yield Buffer.from(text.slice(i, i + charsPerChunk), 'base64');
}

const httpsUrl = (value: unknown): string | undefined => (typeof value === 'string' && /^https?:\/\//i.test(value) && value.length <= 4096 ? value : undefined);

export async function archiveTaskResult(services: Pick<TaskRunnerDeps, 'remote' | 'db' | 'blobs' | 'files'>, upstreams: Upstreams, route: ModelRoute, task: CompiledTask, row: TaskRow, answer: unknown, maxBytes: number, signal: AbortSignal): Promise<ArchiveOutcome> {
  const scope = { answer };
  const providerUrl = task.url ? httpsUrl(task.url(scope)) : undefined;
  try {
    let stream: Readable | Iterable<Uint8Array>;
    const download = task.spec.result.download;
    if (download) {
      const response = await upstreams.send(route, { operation: download.operation, pathScope: { upstream_id: row.upstream_id }, signal });
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        await response.body.dump().catch(() => undefined);
        return { status: 'failed', providerUrl, error: `the result is larger than the ${maxBytes}-byte archive limit` };
      }
      stream = response.body as Readable;
    } else if (providerUrl) {
      stream = (await services.remote.fetch(providerUrl, signal)).body;
    } else {
      const base64 = task.base64?.(scope);
      if (typeof base64 !== 'string' || !base64) return { status: 'failed', error: 'the result carries neither a URL nor base64 data' };
      stream = base64Chunks(base64);
    }
    const file = await storeFile(services, {
      workspaceId: row.workspace_id,
      stream,
      maxBytes,
      filename: `${task.spec.kind}-${row.id}`,
      purpose: task.spec.kind === 'video' ? 'video_generation' : 'image_generation',
      source: 'generated',
      // The dashboard's Files page shows what made it.
      model: row.model,
      taskId: row.id,
    });
    return { fileId: file.id, status: 'archived' };
  } catch (err) {
    const reason = err instanceof GatewayError ? err.message : 'the result could not be stored';
    return { status: 'failed', providerUrl, error: reason.slice(0, 300) };
  }
}
