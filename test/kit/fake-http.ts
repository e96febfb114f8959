// What the fake upstream's routes share: the recorded request, the chat script, and JSON and SSE writers.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  raw: Buffer;
}

export interface ChatScript {
  text: string;
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Tool calls the assistant makes instead of (or besides) text. */
  toolCalls?: { id: string; name: string; arguments: string }[];
  finishReason?: string;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function writeSse(res: ServerResponse, events: (string | { event?: string; data: unknown })[], delayMs = 0, truncate = false) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) {
    const frame = typeof e === 'string' ? `data: ${e}\n\n` : `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`;
    res.write(frame);
    if (delayMs) await sleep(delayMs);
  }
  if (truncate) {
    // Let what was written reach the socket, then cut the connection without ending the chunked body.
    await new Promise((resolve) => res.write('', resolve));
    res.socket?.destroy();
  } else res.end();
}
