// The one archive routine: a generated result (a URL through the remote-fetch guard, base64, or an upstream download) is
// streamed into the workspace's file store, capped. Images, Responses tool images and task results all come through here.
// Never throws: a failure is an outcome with its reason. With a deadline, a transient failure (unreachable, too slow for
// one attempt, 408, 425, 429, 5xx, a body that breaks off) is tried again with back-off until that deadline.
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../base/errors.js';
import { base64Chunks, storeFile } from '../files/index.js';
import type { FileStore } from '../files/file-store.js';
import type { FileLabels } from '../files/store-file.js';
import type { Deadline } from '../net/deadline.js';
import { RemoteFetchError, type RemoteFetcher } from '../net/remote-fetch.js';

export type ResultBytes = Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface ResultToArchive extends Omit<FileLabels, 'source'> {
  workspaceId: string;
  /** Defaults to files.maxUploadBytes. */
  maxBytes?: number;
  /** Opens the result's bytes (again, for another attempt). */
  open(): Promise<ResultBytes>;
  /** Bytes in hand (base64): tried once, there is nothing to fetch again. */
  inline?: boolean;
  /** Transient failures are tried again until it passes; without one, one attempt. */
  deadline?: Deadline;
}

export interface ArchiveOutcome {
  fileId?: string;
  status: 'archived' | 'failed';
  error?: string;
  /** Why it failed, for the caller's log. */
  cause?: unknown;
  /** Set when the remote-fetch guard refused the result's URL (or a redirect of it): why, without the URL. */
  refusal?: string;
  /** How many times the bytes were asked for. */
  attempts: number;
}

/** A failure that another attempt cannot mend (the result is larger than the archive may be). */
export class PermanentFailure extends Error {}

/** Waits before attempt n+1: 0.5 s doubling to 8 s. */
export const backoffMs = (attempt: number) => Math.min(8000, 500 * 2 ** Math.min(attempt - 1, 10));
const TOLERATED = new Set([408, 425, 429]);

/** Whether trying again may get the bytes: the source was unreachable, slow or overloaded, or its body broke off. */
export function isTransient(err: unknown): boolean {
  if (err instanceof PermanentFailure) return false;
  if (err instanceof RemoteFetchError) return err.transient;
  if (err instanceof GatewayError) {
    const status = err.upstreamStatus;
    if (status !== undefined) return status >= 500 || TOLERATED.has(status);
    // The gateway's own 502/504 for an upstream it could not reach or that timed out.
    return err.statusCode === 502 || err.statusCode === 504;
  }
  // A stream that broke off while it was stored.
  return true;
}

/** The opener of a result given as a URL (fetched through the SSRF guard, streamed) or as base64; undefined when it is neither. */
export function resultSource(remote: RemoteFetcher, source: { url?: unknown; base64?: unknown }, signal: AbortSignal): Pick<ResultToArchive, 'open' | 'inline'> | undefined {
  const { url, base64 } = source;
  if (typeof base64 === 'string' && base64) return { open: async () => base64Chunks(base64), inline: true };
  if (typeof url === 'string') return { open: async () => (await remote.fetch(url, signal)).body as Readable };
  return undefined;
}

export async function archiveResult(store: FileStore, result: ResultToArchive): Promise<ArchiveOutcome> {
  const { open, inline, deadline, maxBytes, workspaceId, ...labels } = result;
  for (let attempt = 1; ; attempt++) {
    try {
      const file = await storeFile(store, { workspaceId, stream: await open(), maxBytes, ...labels, source: 'generated' });
      return { fileId: file.id, status: 'archived', attempts: attempt };
    } catch (err) {
      if (deadline && !inline && isTransient(err) && !deadline.signal.aborted) {
        try {
          await sleep(backoffMs(attempt), undefined, { signal: deadline.signal });
          continue;
        } catch {
          // The deadline passed while waiting: the last failure stands.
        }
      }
      const refusal = err instanceof RemoteFetchError ? err.refusal : undefined;
      if (refusal) return { status: 'failed', error: `the result URL was refused: ${refusal}`.slice(0, 300), cause: err, attempts: attempt, refusal };
      const reason = deadline?.expired ? 'the result could not be fetched before the task deadline' : err instanceof GatewayError || err instanceof PermanentFailure ? err.message : 'the result could not be stored';
      return { status: 'failed', error: reason.slice(0, 300), cause: err, attempts: attempt };
    }
  }
}
