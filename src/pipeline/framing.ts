// Stream framings as data: an operation names how its streamed answer is framed (SSE, AWS event streams), and the relay
// reads either into the same events, so usage and mappings never know which framing carried them.
import type { OperationConfig } from '../config/types.js';
import { EventStreamReader } from '../engine/event-stream.js';
import { SseReader, type SseEvent } from '../engine/sse.js';
import { upstreamErrorOf } from '../engine/upstream.js';
import type { Sent } from './send.js';
import { upstreamMalformed } from './usage.js';

/** Splits an upstream body into events one chunk at a time; `end` says what the body's last bytes completed. */
export interface EventReader {
  feed(chunk: Buffer | string): SseEvent[];
  end(): SseEvent[];
}

type Framing = NonNullable<OperationConfig['framing']>;

/** Each framing's content type (what a streamed answer must say it is) and its reader for one sent call. */
const framings: Record<Framing, { contentType: string; reader(sent: Sent, errorMessage: (answer: unknown) => unknown): EventReader }> = {
  sse: { contentType: 'text/event-stream', reader: () => new SseReader() },
  'aws-eventstream': {
    contentType: 'application/vnd.amazon.eventstream',
    reader: (sent, errorMessage) => {
      const statuses = sent.operation.errors?.exceptions ?? {};
      return new EventStreamReader({
        malformed: (detail) => upstreamMalformed(sent.route.channel.id, detail),
        // An exception frame is the error answer the upstream would have sent before streaming: read as one, at its status.
        exception: (type, payload) => upstreamErrorOf(statuses[type] ?? 502, {}, payload, sent.route, errorMessage),
      });
    },
  },
};

export const framingOf = (operation: OperationConfig): Framing => operation.framing ?? 'sse';

/** Every framing's content type, listed once (checked on every JSON answer). */
const streamContentTypes = Object.values(framings).map((f) => f.contentType);

/** The content type header as one lower-case string (lowered only when it holds an upper-case letter). */
function lowerContentType(contentType: unknown): string {
  const type = typeof contentType === 'string' ? contentType : String(contentType ?? '');
  return /[A-Z]/.test(type) ? type.toLowerCase() : type;
}

/** Whether the answer's content type is one of the stream framings (a stream where JSON was expected is malformed). */
export function isStreamContentType(contentType: unknown): boolean {
  const type = lowerContentType(contentType);
  for (const streamType of streamContentTypes) if (type.includes(streamType)) return true;
  return false;
}

/** Whether the answer is framed as its operation declares. */
export function hasFraming(sent: Sent): boolean {
  return lowerContentType(sent.response.headers['content-type']).includes(framings[framingOf(sent.operation)].contentType);
}

/**
 * The reader for a sent call's streamed answer, by its operation's framing; `errorMessage` reads an error body's message
 * as the operation declares (an exception frame throws the error it reports).
 */
export function eventReaderFor(sent: Sent, errorMessage: (answer: unknown) => unknown): EventReader {
  return framings[framingOf(sent.operation)].reader(sent, errorMessage);
}
