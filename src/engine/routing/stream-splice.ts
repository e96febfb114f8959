// Stream failover after the first byte (a route's failover.streamAfterFirstByte, docs/routing.md): the client's events
// recorded as they go out (what it has been sent, in its own dialect), and a continuation's events rewritten so the
// client sees one well-formed stream. Each client dialect that can be spliced reads and rewrites its own events
// (splice-chat.ts, splice-messages.ts, splice-responses.ts).
import { UpstreamError } from '../../base/errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamMapper } from '../translator.js';
import { ChatTranscript } from './splice-chat.js';
import { MessagesTranscript } from './splice-messages.js';
import { ResponsesTranscript } from './splice-responses.js';
import { parsed, type PriorUsage, type StreamTranscript } from './transcript.js';

export type { PriorUsage, StreamTranscript } from './transcript.js';

const transcripts: Readonly<Record<string, (unsafe: string | undefined) => StreamTranscript>> = {
  'openai-chat': (unsafe) => new ChatTranscript(unsafe),
  'anthropic-messages': (unsafe) => new MessagesTranscript(unsafe),
  'openai-responses': (unsafe) => new ResponsesTranscript(unsafe),
};

/** The client dialects whose streams can be spliced. */
export const spliceDialects: ReadonlySet<string> = new Set(Object.keys(transcripts));

/** A new record of what a client of `dialect` is sent; `unsafe` says why it can never be continued (structured output). */
export function transcriptFor(dialect: string, unsafe: string | undefined): StreamTranscript {
  return transcripts[dialect](unsafe);
}

/** Passes a mapper's other members on: a wrapper changes only what it sends. */
function around(mapper: StreamMapper, push: StreamMapper['push'], end: StreamMapper['end']): StreamMapper {
  return {
    push,
    end,
    fail: (error) => mapper.fail(error),
    drain: mapper.drain && (() => mapper.drain!()),
    streamedOutputTokens: mapper.streamedOutputTokens && (() => mapper.streamedOutputTokens!()),
  };
}

/**
 * `mapper`, with what it sends recorded on `transcript`. An upstream error event mid-stream breaks the stream (thrown,
 * not relayed) while it can still be continued; the client gets an error event of its own if it is not.
 */
export function recording(mapper: StreamMapper, transcript: StreamTranscript): StreamMapper {
  const record = (out: SseEvent[]) => {
    const events = out.map((event) => ({ event, data: parsed(event) }));
    if (transcript.blocked() === undefined) {
      for (const { event, data } of events) {
        const error = data ? transcript.errorOf(data, event) : undefined;
        if (error !== undefined) throw new UpstreamError(`the upstream's stream failed: ${error.slice(0, 200)}`, 502, 'upstream_stream_error');
      }
    }
    for (const { event, data } of events) if (data) transcript.see(data, event);
    return out;
  };
  // What the upstream's end adds (closing events) is not continued: it is not recorded.
  return around(mapper, (event, parse) => record(mapper.push(event, parse)), () => mapper.end());
}

/**
 * The continuation's mapper: its client events rewritten to go on with the stream `transcript` recorded, `prior` added
 * to its final usage; `trimLead` drops the whitespace its first text starts with (a prefill sent without its trailing
 * whitespace, which the model then writes again).
 */
export function continuing(mapper: StreamMapper, transcript: StreamTranscript, prior: PriorUsage, trimLead: boolean): StreamMapper {
  const splice = transcript.splice(prior, trimLead);
  return around(mapper, (event, parse) => splice.rewrite(mapper.push(event, parse)), () => splice.rewrite(mapper.end()));
}
