// What a send to a channel is asked (the operation, its body, headers and abort) and what it answers: undici's response.
import type { Readable } from 'node:stream';
import type { Dispatcher, FormData } from 'undici';
import type { AbortSource } from '../net/call-abort.js';
import type { AnswerChunks, ChunkReadOptions } from './answer-chunks.js';

export interface UpstreamRequest {
  operation: string;
  body?: string | Buffer | Readable | FormData | null;
  /** Extra headers for this call (the send stage sets content-type for the operation's encoding). */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** An AbortSignal, or the call's own abort (net/call-abort.ts), which undici takes as an EventEmitter-shaped signal. */
  signal?: AbortSignal | AbortSource;
  /** Values for Liquid in the operation path besides `model` (e.g. a task id). */
  pathScope?: Record<string, unknown>;
  /** A path and query on the channel's own origin that replaces the operation's (an absolute URL the upstream gave); with no declared operation, a GET. */
  originPath?: string;
  /** Sent once, never retried by the channel's `retries` (a task's submit: the upstream may have made the task). */
  once?: boolean;
  /** The request asks for a stream: an operation with a `streamPath` is sent there. */
  stream?: boolean;
}

/**
 * undici's response; an answer of a channel (upstream-call.ts) can also give its body without making the stream: whole
 * as text (`readText`: refused with `tooLarge()` past `limit` bytes), or chunk by chunk (`chunks`, for an event stream
 * relayed), and say how many bytes came unread (`bufferedBytes`) and stop the call (`cancel`).
 */
export type UpstreamResponse = Dispatcher.ResponseData<unknown> & {
  readText?(limit: number, tooLarge: () => Error): Promise<string>;
  chunks?(options?: ChunkReadOptions): AnswerChunks;
  readonly bufferedBytes?: number;
  cancel?(): void;
};
