// A scriptable fake upstream: a real HTTP server on 127.0.0.1, answering each shipped protocol, with faults on demand.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicMessages } from './fake-anthropic.js';
import { json, writeSse, type ChatScript, type RecordedRequest } from './fake-http.js';

export { json, writeSse, type ChatScript, type RecordedRequest } from './fake-http.js';

/** A one-off answer for the next matching request. */
export type Behaviour =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'sse'; events: (string | { event?: string; data: unknown })[]; delayMs?: number; truncate?: boolean }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'reset-after-headers' }
  | { kind: 'stall' }
  | { kind: 'malformed-json' }
  | { kind: 'trickle'; text: string; delayMs: number }
  | { kind: 'handler'; fn: (req: RecordedRequest, res: ServerResponse) => void | Promise<void> };

export type Route = (req: RecordedRequest, res: ServerResponse, fake: FakeUpstream) => boolean | Promise<boolean>;

export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: { match?: (r: RecordedRequest) => boolean; behaviour: Behaviour }[] = [];
  private readonly routes: Route[] = [];
  private server!: Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';
  chat: ChatScript = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };

  static async start(): Promise<FakeUpstream> {
    const fake = new FakeUpstream();
    await fake.listen();
    return fake;
  }

  /** Adds a protocol route (tried before the built-in ones). */
  route(route: Route): this {
    this.routes.unshift(route);
    return this;
  }

  /** Scripts the answer to the next request (optionally only one that matches). */
  next(behaviour: Behaviour, match?: (r: RecordedRequest) => boolean): this {
    this.queue.push({ behaviour, match });
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  get last(): RecordedRequest | undefined {
    return this.requests[this.requests.length - 1];
  }

  private async listen() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    let body: unknown = undefined;
    if ((req.headers['content-type'] ?? '').includes('json') && raw.length) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
    }
    const recorded: RecordedRequest = { method: req.method!, path: req.url!, headers: req.headers, body, raw };
    this.requests.push(recorded);
    const index = this.queue.findIndex((q) => !q.match || q.match(recorded));
    if (index >= 0) {
      const [{ behaviour }] = this.queue.splice(index, 1);
      return play(behaviour, recorded, res);
    }
    for (const route of [...this.routes, ...builtinRoutes]) if (await route(recorded, res, this)) return;
    json(res, 404, { error: { message: `fake upstream has no route for ${req.method} ${req.url}` } });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function play(b: Behaviour, req: RecordedRequest, res: ServerResponse) {
  switch (b.kind) {
    case 'json':
      return json(res, b.status ?? 200, b.body, b.headers);
    case 'status':
      return json(res, b.status, b.body ?? { error: { message: `scripted status ${b.status}` } }, b.headers);
    case 'sse':
      return writeSse(res, b.events, b.delayMs, b.truncate);
    case 'reset-after-headers':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      setTimeout(() => res.socket?.destroy(), 5);
      return;
    case 'stall':
      return; // never answers
    case 'malformed-json':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"id": "broken", ');
    case 'trickle': {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (const ch of b.text) {
        res.write(ch);
        await sleep(b.delayMs);
      }
      return res.end();
    }
    case 'handler':
      return b.fn(req, res);
  }
}

/** OpenAI chat completions: echoes the script, streaming when asked, usage chunk when include_usage. */
const openaiChat: Route = async (req, res, fake) => {
  if (req.method !== 'POST' || !req.path.endsWith('/chat/completions')) return false;
  const { text, usage, toolCalls, finishReason } = fake.chat;
  const id = 'chatcmpl-fake';
  const created = Math.floor(Date.now() / 1000);
  const model = req.body?.model ?? 'unknown';
  const usageBody = {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    ...(usage.cached_tokens ? { prompt_tokens_details: { cached_tokens: usage.cached_tokens } } : {}),
  };
  const finish = finishReason ?? (toolCalls?.length ? 'tool_calls' : 'stop');
  if (!req.body?.stream) {
    json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: toolCalls?.length && !text ? null : text,
            ...(toolCalls?.length ? { tool_calls: toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })) } : {}),
          },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage: usageBody,
    });
    return true;
  }
  const base = { id, object: 'chat.completion.chunk', created, model };
  const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  for (const piece of text.match(/.{1,8}/gs) ?? []) events.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
  (toolCalls ?? []).forEach((t, index) => {
    events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }, finish_reason: null }] });
    for (const piece of t.arguments.match(/.{1,10}/gs) ?? []) {
      events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }] });
    }
  });
  events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (req.body?.stream_options?.include_usage) events.push({ ...base, choices: [], usage: usageBody });
  await writeSse(res, [...events.map((e) => JSON.stringify(e)), '[DONE]']);
  return true;
};

const builtinRoutes: Route[] = [openaiChat, anthropicMessages];
