// Streams cut short on purpose: an upstream that sends some events and holds on, and a client that hangs up mid-answer.
import { request as httpRequest, type ServerResponse } from 'node:http';
import type { FakeUpstream } from './fake-upstream.js';

/** The fake's next answer: `events` (named or not; bare values are data), then the connection held until the gateway hangs up. */
export function holdingStream(fake: FakeUpstream, events: ({ event?: string; data: unknown } | unknown)[]): void {
  fake.next({
    kind: 'handler',
    fn: (_req, res: ServerResponse) =>
      new Promise<void>((done) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of events) {
          const { event, data } = e && typeof e === 'object' && 'data' in e ? (e as { event?: string; data: unknown }) : { event: undefined, data: e };
          res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
        }
        res.on('close', () => done());
      }),
  });
}

/** POSTs `body` to `url` over a real socket and hangs up once what arrived matches `until`; resolves the request id. */
export function hangUpAfter(url: string, headers: Record<string, string>, body: unknown, until: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (until(text)) {
          req.destroy();
          resolve(res.headers['x-request-id'] as string);
        }
      });
    });
    req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
    req.end(JSON.stringify(body));
  });
}

const chatChunk = (content: string) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/**
 * The fake's next answer: a chat stream that sends `first`, then waits for the test. `started` resolves once the
 * first chunk is out; `finish()` sends `last`, the usage chunk and [DONE].
 */
export function pausedChatStream(fake: FakeUpstream, first: string, last: string): { started: Promise<void>; finish: () => void } {
  let finish!: () => void;
  const started = new Promise<void>((resolve) => {
    fake.next({
      kind: 'handler',
      fn: (_req, res: ServerResponse) =>
        new Promise<void>((done) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify(chatChunk(first))}\n\n`);
          resolve();
          finish = () => {
            res.write(`data: ${JSON.stringify(chatChunk(last))}\n\n`);
            res.write(`data: ${JSON.stringify({ ...chatChunk(''), choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`);
            res.end('data: [DONE]\n\n');
            done();
          };
        }),
    });
  });
  return { started, finish: () => finish() };
}

/** Every chunk an iterable gives, as text, then `error: <message>` if it throws: what a reader of an answer sees. */
export async function collectChunks(chunks: AsyncIterable<Buffer>): Promise<string[]> {
  const seen: string[] = [];
  try {
    for await (const chunk of chunks) seen.push(chunk.toString());
  } catch (err) {
    seen.push(`error: ${(err as Error).message}`);
  }
  return seen;
}
