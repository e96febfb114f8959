import { once } from 'node:events';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, writeSse } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let backup: FakeUpstream;
let gw: TestGateway;

const withTimeouts = (yaml: string) => yaml.replace('models:', 'timeouts: { connectMs: 500, headersMs: 300, bodyMs: 300 }\nmodels:');
const fallbackModels = (priority: number) => `priority: ${priority}
models:
  - id: grouped
    kind: chat
    fallback: true
    price: { inputPerMillion: 1, outputPerMillion: 1 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  backup = await FakeUpstream.start();
  gw = await startGateway({
    listen: true,
    env: { UNSET_FOR_TEST: '' },
    channels: {
      fake: withTimeouts(chatChannel('fake', `${fake.url}/v1`)),
      keyless: chatChannel('keyless', `${fake.url}/v1`, { credentialEnv: 'UNSET_FOR_TEST', models: '  - id: needs-key\n    kind: chat\n    price: { perRequest: 0.01 }\n' }),
      primary: `id: primary\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\n${fallbackModels(0)}`,
      secondary: `id: secondary\nprotocol: openai-chat\nbaseUrl: ${backup.url}/v1\n${fallbackModels(1)}`,
    },
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
  await backup.close();
});

const chat = (body: Record<string, unknown> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }], ...body } });

describe('upstream faults become clear, typed errors', () => {
  it('passes an upstream 429 on with its retry-after', async () => {
    fake.next({ kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const res = await chat();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json().error.type).toBe('rate_limit_error');
  });

  it('answers 502 when the upstream resets after its headers', async () => {
    fake.next({ kind: 'reset-after-headers' });
    const res = await chat();
    expect(res.statusCode).toBe(502);
  });

  it('answers 504 when the upstream stalls past the header timeout', async () => {
    fake.next({ kind: 'stall' });
    const res = await chat();
    expect(res.statusCode).toBe(504);
    expect(res.json().error.code).toBe('upstream_timeout');
  });

  it('answers 502 when the upstream sends malformed JSON', async () => {
    fake.next({ kind: 'malformed-json' });
    const res = await chat();
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
  });

  it('waits out a slow trickle that stays within the body timeout', async () => {
    const body = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    fake.next({ kind: 'handler', fn: async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (const part of body.match(/.{1,40}/g)!) {
        res.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
      res.end();
    } });
    const res = await chat();
    expect(res.statusCode).toBe(200);
    expect(res.json().choices[0].message.content).toBe('ok');
  });

  it('ends a truncated stream with an error event instead of hanging', async () => {
    fake.next({ kind: 'sse', truncate: true, events: [JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'par' }, finish_reason: null }] })] });
    const res = await chat({ stream: true });
    expect(res.statusCode).toBe(200);
    const frames = res.body.split('\n\n').filter(Boolean);
    expect(frames[0]).toContain('"par"');
    expect(JSON.parse(frames.at(-1)!.replace(/^data: /, '')).error.type).toBe('upstream_error');
  });

  it('answers 503 saying a disabled channel is not configured, without naming the variable it lacks (the operator log and /readyz do)', async () => {
    const res = await chat({ model: 'needs-key' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toContain('channel "keyless" is not configured on this gateway');
    expect(res.json().error.message).not.toContain('UNSET_FOR_TEST');
  });

  it('falls back to the next channel of a fallback group when the first fails', async () => {
    fake.next({ kind: 'status', status: 503 });
    backup.reset();
    const res = await chat({ model: 'grouped' });
    expect(res.statusCode).toBe(200);
    expect(backup.requests).toHaveLength(1);
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    let upstreamClosed!: Promise<unknown>;
    fake.next({ kind: 'handler', fn: async (_req, res) => {
      upstreamClosed = once(res, 'close');
      const chunk = JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'tick' }, finish_reason: null }] });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(`data: ${chunk}\n\n`), 10);
      res.on('close', () => clearInterval(timer));
    } });
    const controller = new AbortController();
    const response = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: controller.signal,
    });
    for await (const chunk of response.body) {
      if (String(chunk).includes('tick')) break;
    }
    controller.abort();
    await upstreamClosed;
    expect(fake.requests.length).toBeGreaterThan(0);
  });
});
