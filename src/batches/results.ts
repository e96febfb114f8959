// What a finished line keeps (batch_lines.result) and how each kind of batch writes its results: OpenAI's output and
// error files, Anthropic's one results file. Lines are read a page at a time, so a file of 50,000 answers is streamed.
import type { BatchLineRow, BatchRow } from './store.js';

/** A line's end as kept: the answer (any status), or the reason it has none. */
export interface LineResult {
  status_code?: number;
  request_id?: string;
  body?: unknown;
  /** Set when the line got no answer (cancelled, expired, or a fault before the upstream answered). */
  error?: { code: string; message: string };
}

/**
 * Why an unfinished line ended with the batch: a cancel, the expiry, its vendor batch failing, or (a relayed batch) no
 * result for it from a vendor batch that completed.
 */
export type Unfinished = 'cancelled' | 'expired' | 'failed' | 'missing';

export interface ResultFiles {
  /** The file of answers (OpenAI: 2xx answers; Anthropic: every line); undefined when it would be empty. */
  output(line: BatchLineRow, result: LineResult | undefined, unfinished?: Unfinished): string | undefined;
  /** The file of failures (OpenAI's error file); Anthropic keeps them in the one results file. */
  error(line: BatchLineRow, result: LineResult | undefined, unfinished?: Unfinished): string | undefined;
}

const ok = (result: LineResult | undefined) => result?.status_code !== undefined && result.status_code < 300;

const UNFINISHED: Record<Unfinished, { code: string; message: string }> = {
  cancelled: { code: 'batch_cancelled', message: 'the batch was cancelled before this request ran' },
  expired: { code: 'batch_expired', message: 'this request could not be run before the batch expired' },
  failed: { code: 'batch_failed', message: "the vendor's batch failed before this request ran; the batch's errors say why" },
  missing: { code: 'vendor_result_missing', message: "the vendor's batch ended without a result for this request" },
};

/** OpenAI: a 2xx answer goes to the output file; any other answer, or none, to the error file. */
const openai: ResultFiles = {
  output(line, result) {
    if (!ok(result)) return undefined;
    return JSON.stringify({ id: `batch_req_${line.batch_id.slice(6)}_${line.line}`, custom_id: line.custom_id, response: { status_code: result!.status_code, request_id: result!.request_id, body: result!.body }, error: null });
  },
  error(line, result, unfinished) {
    if (ok(result)) return undefined;
    const response = result?.status_code === undefined ? null : { status_code: result.status_code, request_id: result.request_id, body: result.body };
    const error = result?.error ?? (response ? null : UNFINISHED[unfinished ?? 'cancelled']);
    return JSON.stringify({ id: `batch_req_${line.batch_id.slice(6)}_${line.line}`, custom_id: line.custom_id, response, error });
  },
};

/** The Anthropic result types of a request that never ran, by the reason's code. */
const STOPPED: Record<string, 'canceled' | 'expired'> = { batch_cancelled: 'canceled', batch_expired: 'expired' };

/** Anthropic: one results file, a line per request: succeeded with its message, errored with its error, canceled or expired. */
const anthropic: ResultFiles = {
  output(line, result, unfinished) {
    const stopped = result ? STOPPED[result.error?.code ?? ''] : STOPPED[UNFINISHED[unfinished ?? 'cancelled'].code];
    if (stopped && result?.status_code === undefined) return JSON.stringify({ custom_id: line.custom_id, result: { type: stopped } });
    if (ok(result)) return JSON.stringify({ custom_id: line.custom_id, result: { type: 'succeeded', message: result!.body } });
    const body = result?.body as { error?: { type?: string; message?: string } } | undefined;
    const error = body?.error ?? { type: 'api_error', message: result?.error?.message ?? UNFINISHED[unfinished ?? 'cancelled'].message };
    return JSON.stringify({ custom_id: line.custom_id, result: { type: 'errored', error: { type: 'error', error } } });
  },
  error: () => undefined,
};

export function resultFilesOf(batch: Pick<BatchRow, 'object'>): ResultFiles {
  return batch.object === 'message_batch' ? anthropic : openai;
}
