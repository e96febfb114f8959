// Watches a missed call's answer go out and hands it on to be kept: a 200 JSON answer's text as it is sent, or an event
// stream's text once the response has ended (a stream the client left never ends; one the upstream cut ends with an
// error event, which the keeper refuses). Past the largest entry the store keeps, nothing is collected.
import type { AnswerTap, ClientStream } from '../pipeline/call.js';

/** Takes an answer's text with its UTF-8 length (counted once, here). */
export interface AnswerKeeper {
  keepJson(text: string, bytes: number): void;
  keepStream(text: string, bytes: number): void;
}

export class AnswerCapture implements AnswerTap {
  private bytes = 0;
  private overflow = false;

  constructor(
    private readonly maxBytes: number,
    private readonly keeper: AnswerKeeper,
  ) {}

  answered(text: string, status: number): void {
    // A string's UTF-8 length is at least its length: one too long is left without counting its bytes.
    if (status !== 200 || text.length > this.maxBytes) return;
    const bytes = Buffer.byteLength(text);
    if (bytes <= this.maxBytes) this.keeper.keepJson(text, bytes);
  }

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
