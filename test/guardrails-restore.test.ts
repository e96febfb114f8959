// `restore: true` through HTTP with the official OpenAI SDK: a redacting pattern guardrail's values go upstream as
// numbered placeholders and come back in that request's answer, whole and streamed (a placeholder split across events
// held whole); another request's answer never gets them; such answers are never cached; a captured answer, request-log
// rows and log lines keep the placeholders, never the values.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readBodies } from '../src/request-logs/bodies.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs, type LogCapture } from './kit/log-capture.js';

const EMAIL = 'jane.doe@example.com';
const OTHER = 'bob@example.org';
const CARD = '4111 1111 1111 1111';

const GUARDRAILS = `
- id: pii-restore
  kind: pattern
  detectors: [email, payment-card]
  action: redact
  restore: true
`;
const ROUTES = `
- id: restore-chat
  targets: [{ model: gpt-fake }]
  guardrails: [pii-restore]
- id: restore-cached
  targets: [{ model: gpt-fake }]
  guardrails: [pii-restore]
  cache: { ttlSeconds: 3600 }
`;

let fake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let logs: LogCapture;
/** When set, the fake answers with this text instead of echoing the request's last message. */
let scripted: string | undefined;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  // The model repeats what it was sent (the redacted text), through the built-in chat route, whole or streamed.
  fake.route((req) => {
    const messages = (req.body as { messages?: { content: string }[] } | undefined)?.messages;
    if (messages) fake.chat = { text: scripted ?? `You said: ${messages[messages.length - 1].content}`, usage: { prompt_tokens: 10, completion_tokens: 5 } };
    return false;
  });
  logs = captureLogs('debug');
  gw = await startGateway({
    channels: { gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n` },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS },
    extraConfig: 'requestLogs:\n  captureBodies: true\n',
    logger: logs.logger,
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  scripted = undefined;
});

const said = `Mail ${EMAIL} and ${OTHER}, charge ${CARD}, then mail ${EMAIL} again.`;
const upstreamSaw = () => (fake.last!.body as { messages: { content: string }[] }).messages[0].content;

describe('restore', () => {
  it('sends numbered placeholders upstream (one per value) and puts the values back in the answer', async () => {
    const answer = await openai.chat.completions.create({ model: 'restore-chat', messages: [{ role: 'user', content: said }] });
    expect(upstreamSaw()).toBe('Mail [REDACTED:email:1] and [REDACTED:email:2], charge [REDACTED:payment-card:3], then mail [REDACTED:email:1] again.');
    expect(answer.choices[0].message.content).toBe(`You said: ${said}`);
  });

  it('puts them back in a streamed answer, a placeholder split across events held whole', async () => {
    const stream = await openai.chat.completions.create({ model: 'restore-chat', stream: true, messages: [{ role: 'user', content: said }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(`You said: ${said}`);
  });

  it("never fills a placeholder with another request's value", async () => {
    await openai.chat.completions.create({ model: 'restore-chat', messages: [{ role: 'user', content: said }] });
    scripted = 'Earlier you wrote [REDACTED:email:1].';
    const answer = await openai.chat.completions.create({ model: 'restore-chat', messages: [{ role: 'user', content: 'What did I write?' }] });
    expect(answer.choices[0].message.content).toBe('Earlier you wrote [REDACTED:email:1].');
  });

  it('never caches an answer with restored values: the same redacted request with another address gets its own back', async () => {
    const first = await openai.chat.completions.create({ model: 'restore-cached', messages: [{ role: 'user', content: `Mail ${EMAIL}` }] }).withResponse();
    const second = await openai.chat.completions.create({ model: 'restore-cached', messages: [{ role: 'user', content: `Mail ${OTHER}` }] }).withResponse();
    expect(first.response.headers.get('x-cache')).toBe('bypass');
    expect(second.response.headers.get('x-cache')).toBe('bypass');
    expect(second.data.choices[0].message.content).toBe(`You said: Mail ${OTHER}`);
    expect(fake.requests).toHaveLength(2);
  });

  it('keeps the placeholders, never the values, in captured bodies, request-log rows and log lines', async () => {
    const { response } = await openai.chat.completions.create({ model: 'restore-chat', messages: [{ role: 'user', content: said }] }).withResponse();
    let row: { body_key: string | null } | undefined;
    for (let i = 0; i < 100 && !row?.body_key; i++) {
      await gw.services.requestLogs.commitQueued();
      row = await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', response.headers.get('x-request-id')!).executeTakeFirst();
      if (!row?.body_key) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const bodies = await readBodies(gw.services.blobs, row!.body_key);
    expect(bodies!.response.body).toContain('[REDACTED:email:1]');
    const everything = JSON.stringify(bodies) + JSON.stringify(row) + JSON.stringify(logs.lines);
    for (const value of [EMAIL, OTHER, CARD]) expect(everything.includes(value), `${value} found in clear`).toBe(false);
  });
});
