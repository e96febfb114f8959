// Server-sent events in both directions: parse an upstream body into events, write frames to a client with backpressure.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  event?: string;
  data: string;
}

/** Yields the events of an SSE byte stream as they arrive. */
export async function* readSse(body: AsyncIterable<Buffer | string>): AsyncGenerator<SseEvent> {
  const pending: SseEvent[] = [];
  const parser = createParser({ onEvent: (e: EventSourceMessage) => pending.push({ event: e.event, data: e.data }) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (pending.length) yield pending.shift()!;
  }
  parser.feed(decoder.decode());
  while (pending.length) yield pending.shift()!;
}

export function sseFrame(event: SseEvent): string {
  return event.event ? `event: ${event.event}\ndata: ${event.data}\n\n` : `data: ${event.data}\n\n`;
}

/** Writes frames, waiting for the socket to drain when it pushes back. */
export async function writeFrames(res: ServerResponse, frames: string[]): Promise<void> {
  if (!frames.length) return;
  const ok = res.write(frames.length === 1 ? frames[0] : frames.join(''));
  if (!ok && !res.destroyed) await Promise.race([once(res, 'drain'), once(res, 'close')]);
}
