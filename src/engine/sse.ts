// Server-sent events in both directions: parse an upstream body into events, write frames to a client with backpressure.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Splits an SSE byte stream into events one chunk at a time: `feed` returns the events a chunk completed (the parser's
 * own objects, not copies), so the events of one chunk can be relayed together.
 */
export class SseReader {
  private readonly parser: EventSourceParser;
  /**
   * UTF-8 across chunk boundaries, invalid bytes as U+FFFD, as a TextDecoder's; a fraction of its cost on the small chunks
   * of an event stream (its first event's included). A TextDecoder also drops a leading byte order mark: `text` does.
   */
  private readonly decoder = new StringDecoder('utf8');
  private started = false;
  private batch: SseEvent[] = [];

  constructor() {
    this.parser = createParser({ onEvent: (e: EventSourceMessage) => this.batch.push(e) });
  }

  feed(chunk: Buffer | string): SseEvent[] {
    this.parser.feed(typeof chunk === 'string' ? chunk : this.text(this.decoder.write(chunk)));
    return this.take();
  }

  /** The body ended: whatever its last bytes completed. */
  end(): SseEvent[] {
    this.parser.feed(this.text(this.decoder.end()));
    return this.take();
  }

  /** The decoded text as the parser takes it: the stream's byte order mark, if it opens with one, left out. */
  private text(decoded: string): string {
    if (this.started || decoded.length === 0) return decoded;
    this.started = true;
    return decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  }

  private take(): SseEvent[] {
    if (!this.batch.length) return noEvents;
    const events = this.batch;
    this.batch = [];
    return events;
  }
}

const noEvents: SseEvent[] = [];

export function sseFrame(event: SseEvent): string {
  return event.event ? `event: ${event.event}\ndata: ${event.data}\n\n` : `data: ${event.data}\n\n`;
}

/**
 * Frames gathered and written together: the events of one upstream chunk cost one write (and the first write carries
 * the response head when it was not flushed on its own). `flush` waits for the socket to drain when it pushes back.
 */
export class SseWriter {
  private pending = '';

  constructor(private readonly res: Writable) {}

  add(events: readonly SseEvent[]): void {
    for (const event of events) this.pending += sseFrame(event);
  }

  /** Ends the response with what is still pending: the last frames and the end of the body in one write. */
  end(): void {
    const last = this.pending;
    this.pending = '';
    if (last) this.res.end(last);
    else this.res.end();
  }

  async flush(): Promise<void> {
    if (!this.pending) return;
    const ok = this.res.write(this.pending);
    this.pending = '';
    if (!ok && !this.res.destroyed) await Promise.race([once(this.res, 'drain'), once(this.res, 'close')]);
  }
}
