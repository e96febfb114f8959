// What a client has been sent of one text stream, and a continuation's events rewritten to go on with it: the part every
// client dialect shares (the text so far, why it cannot be continued, a prefill's whitespace dropped). Each dialect
// (splice-chat.ts, splice-messages.ts, splice-responses.ts) reads and rewrites its own events.
import type { SseEvent } from '../sse.js';

export type Json = Record<string, any>;

/** Tokens an earlier attempt used, added to the continuation's final usage (what the client reads). */
export interface PriorUsage {
  inputTokens: number;
  outputTokens: number;
}

/** The most text a stream may have streamed and still be continued (it goes back upstream as the continuation's prefill). */
const MAX_CONTINUED_CHARS = 2 * 1024 * 1024;

/** An event's data as a JSON object; undefined for `[DONE]` and anything that is not one. */
export const parsed = (event: SseEvent): Json | undefined => {
  if (event.data === '[DONE]') return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return value && typeof value === 'object' ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
};

export abstract class StreamTranscript {
  text = '';
  /** Why a break cannot be continued, for good (a tool call, structured output, several choices, an answer already ended). */
  unsafe: string | undefined;

  constructor(unsafe?: string) {
    this.unsafe = unsafe;
  }

  /** Why a break now cannot be continued: `unsafe`, or something the client has open that a continuation cannot finish. */
  blocked(): string | undefined {
    return this.unsafe;
  }

  /** Reads one client event as it goes out. */
  abstract see(data: Json, event: SseEvent): void;

  /** The message of an upstream error the client event relays (an error event mid-stream), else undefined. */
  abstract errorOf(data: Json, event: SseEvent): string | undefined;

  /** The rewriting of a continuation's events, `prior` added to its final usage. */
  abstract splice(prior: PriorUsage, trimLead: boolean): Splice;

  protected append(text: string): void {
    if (this.unsafe) return;
    if (this.text.length + text.length > MAX_CONTINUED_CHARS) this.unsafe = 'an answer too long to continue';
    else this.text += text;
  }
}

/**
 * A continuation's client events rewritten one by one, each recorded on the transcript as soon as it is rewritten (a
 * later event of the same batch, a `done` repeating the whole text, reads it). `trimLead` drops the whitespace the
 * continuation's first text starts with (a prefill sent without its trailing whitespace, which the model writes again).
 */
export abstract class Splice {
  private trimming: boolean;

  constructor(
    protected readonly transcript: StreamTranscript,
    trimLead: boolean,
  ) {
    this.trimming = trimLead;
  }

  rewrite(events: readonly SseEvent[]): SseEvent[] {
    const out: SseEvent[] = [];
    for (const event of events) {
      const data = parsed(event);
      if (!data) {
        out.push(event);
        continue;
      }
      const kept = this.event(data, event);
      if (!kept) continue;
      this.transcript.see(kept, event);
      out.push({ event: event.event, data: JSON.stringify(kept) });
    }
    return out;
  }

  /** The event as the client gets it; undefined drops it. */
  protected abstract event(data: Json, event: SseEvent): Json | undefined;

  protected trim(text: string): string {
    if (!this.trimming) return text;
    const trimmed = text.trimStart();
    if (trimmed) this.trimming = false;
    return trimmed;
  }
}
