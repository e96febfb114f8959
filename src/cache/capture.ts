// Watches a missed call's event stream go out and hands its text on to be kept once the response has ended (a stream
// the client left never ends; one the upstream cut ends with an error event, which the keeper refuses). Past the
// largest entry the store keeps, nothing is collected. (A JSON answer is handed to the ticket itself: ticket.ts.)
import type { ClientStream } from '../pipeline/call.js';

/** Takes an answer's text with its UTF-8 length (counted once, here). */
export interface AnswerKeeper {
  keepJson(text: string, bytes: number): void;
  keepStream(text: string, bytes: number): void;
}

export class AnswerCapture {
  private bytes = 0;
  private overflow = false;

  constructor(
    private readonly maxBytes: number,
    private readonly keeper: AnswerKeeper,
  ) {}

  streaming(res: ClientStream, head: Record<string, string>): void {
    if (!String(head['content-type'] ?? '').startsWith('text/event-stream')) return;
    const chunks: string[] = [];
    const add = (chunk: unknown) => {
      if (this.overflow || chunk === undefined || typeof chunk === 'function') return;
      const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
      this.bytes += Buffer.byteLength(text);
      if (this.bytes > this.maxBytes) {
        this.overflow = true;
        chunks.length = 0;
      } else chunks.push(text);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ClientStream;
    res.write = ((chunk: unknown, ...rest: unknown[]) => (add(chunk), write(chunk, ...rest))) as ClientStream['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => (add(chunk), end(chunk, ...rest))) as ClientStream['end'];
    res.once('finish', () => {
      if (!this.overflow) this.keeper.keepStream(chunks.join(''), this.bytes);
    });
  }
}
