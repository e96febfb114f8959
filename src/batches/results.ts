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

/** Why an unfinished line ended with the batch. */
export type Unfinished = 'cancelled' | 'expired';

export interface ResultFiles {
  /** The file of answers (OpenAI: 2xx answers; Anthropic: every line); undefined when it would be empty. */
  output(line: BatchLineRow, result: LineResult | undefined, unfinished?: Unfinished): string | undefined;
  /** The file of failures (OpenAI's error file); Anthropic keeps them in the one results file. */
  error(line: BatchLineRow, result: LineResult | undefined, unfinished?: Unfinished): string | undefined;
}

const ok = (result: LineResult | undefined) => result?.status_code !== undefined && result.status_code < 300;

const unfinishedError = (why: Unfinished) =>
  why === 'cancelled' ? { code: 'batch_cancelled', message: 'the batch was cancelled before this request ran' } : { code: 'batch_expired', message: 'this request could not be run before the batch expired' };

/** OpenAI: a 2xx answer goes to the output file; any other answer, or none, to the error file. */
const openai: ResultFiles = {
  output(line, result) {
    if (!ok(result)) return undefined;
    return JSON.stringify({ id: `batch_req_${line.batch_id.slice(6)}_${line.line}`, custom_id: line.custom_id, response: { status_code: result!.status_code, request_id: result!.request_id, body: result!.body }, error: null });
  },
  error(line, result, unfinished) {
    if (ok(result)) return undefined;
    const response = result?.status_code === undefined ? null : { status_code: result.status_code, request_id: result.request_id, body: result.body };
    const error = result?.error ?? (response ? null : unfinishedError(unfinished ?? 'cancelled'));
    return JSON.stringify({ id: `batch_req_${line.batch_id.slice(6)}_${line.line}`, custom_id: line.custom_id, response, error });
  },
};

/** Anthropic: one results file, a line per request: succeeded with its message, errored with its error, canceled or expired. */
const anthropic: ResultFiles = {
  output(line, result, unfinished) {
    if (!result) return JSON.stringify({ custom_id: line.custom_id, result: { type: unfinished === 'expired' ? 'expired' : 'canceled' } });
    if (ok(result)) return JSON.stringify({ custom_id: line.custom_id, result: { type: 'succeeded', message: result.body } });
    const body = result.body as { error?: { type?: string; message?: string } } | undefined;
    const error = body?.error ?? { type: 'api_error', message: result.error?.message ?? 'the request failed' };
    return JSON.stringify({ custom_id: line.custom_id, result: { type: 'errored', error: { type: 'error', error } } });
  },
  error: () => undefined,
};

export function resultFilesOf(batch: Pick<BatchRow, 'object'>): ResultFiles {
  return batch.object === 'message_batch' ? anthropic : openai;
}
