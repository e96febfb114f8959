// `http` guardrails through HTTP with the official SDKs: the request's texts POSTed to the operator's guard service (a
// loopback fake following docs/guardrails.md, "The http guard protocol"), signed as webhooks are; its verdict redacts
// spans (code-point offsets) or whole texts before the upstream sees them, or blocks with a 400 naming the guardrail;
// a guard that hangs past its deadline, or answers outside the protocol, fails open or closed as configured. Nothing
// the guard matched reaches a request-log row or a log line.
import { createHmac } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream, json, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs, type LogCapture } from './kit/log-capture.js';

const NAME = 'Alice Smith';
const SIGNING_KEY = 'guard-signing-key-0123456789';

/** The fake guard: what each guardrail's service does with the texts it is sent. */
const SERVICES: Record<string, (texts: string[]) => unknown> = {
  // Spans of the name, in code points (as a Python service counts them).
  'names-service': (texts) => ({
    verdict: texts.some((t) => t.includes(NAME)) ? 'redact' : 'allow',
    redactions: texts.flatMap((text, index) => (text.includes(NAME) ? [{ text: index, start: [...text.slice(0, text.indexOf(NAME))].length, end: [...text.slice(0, text.indexOf(NAME))].length + [...NAME].length, label: 'name' }] : [])),
  }),
  'rewrite-service': (texts) => ({ verdict: 'redact', texts: texts.map((t) => (t.includes(NAME) ? t.replaceAll(NAME, 'a customer') : null)) }),
  'policy-service': (texts) => (texts.some((t) => /forbidden topic/i.test(t)) ? { verdict: 'block', labels: ['policy'] } : { verdict: 'allow' }),
  'broken-service': () => ({ verdict: 'maybe' }),
};

const GUARDRAILS = `
- id: names-service
  kind: http
  http: { url: "{{guard}}/check", secretEnv: GUARD_SECRET }
  action: redact
- id: rewrite-service
  kind: http
  http: { url: "{{guard}}/check" }
  action: redact
- id: policy-service
  kind: http
  http: { url: "{{guard}}/check", secretEnv: GUARD_SECRET }
  action: block
- id: broken-service
  kind: http
  http: { url: "{{guard}}/check" }
  action: block
- id: hang-open
  kind: http
  http: { url: "{{guard}}/hang" }
  action: block
  timeoutMs: 150
  failMode: open
- id: hang-closed
  kind: http
  http: { url: "{{guard}}/hang" }
  action: block
  timeoutMs: 150
  failMode: closed
`;
const ROUTES = ['names-service', 'rewrite-service', 'policy-service', 'broken-service', 'hang-open', 'hang-closed']
  .map((id) => `- id: ${id}-chat\n  targets: [{ model: gpt-fake }]\n  guardrails: [${id}]\n`)
  .join('');

let fake: FakeUpstream;
let guard: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let logs: LogCapture;

beforeAll(async () => {
  [fake, guard] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  guard.route((req, res) => {
    if (req.path === '/hang') return true; // never answers
    const { guardrail, texts } = req.body as { guardrail: string; texts: string[] };
    json(res, 200, SERVICES[guardrail](texts));
    return true;
  });
  fake.route((req, res) => {
    if (!req.path.endsWith('/messages')) return false;
    json(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'gpt-fake', content: [{ type: 'text', text: 'Noted.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } });
    return true;
  });
  logs = captureLogs('debug');
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS.replaceAll("{{guard}}", guard.url) },
    env: { GUARD_SECRET: SIGNING_KEY },
    extraConfig: 'requestLogs:\n  captureBodies: true\n',
    logger: logs.logger,
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, guard].map((f) => f?.close()));
});
beforeEach(() => {
  fake.reset();
  guard.reset();
  fake.chat = { text: 'Noted.', usage: { prompt_tokens: 10, completion_tokens: 5 } };
});

const userText = (req: RecordedRequest) => (req.body as { messages: { content: string }[] }).messages.map((m) => m.content);
const chat = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }] });

/** Verifies a request's Standard Webhooks signature the way a receiver would, with the key's bytes. */
function signatureValid(req: RecordedRequest): boolean {
  const id = String(req.headers['webhook-id']);
  const timestamp = String(req.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(SIGNING_KEY)).update(`${id}.${timestamp}.${req.raw.toString('utf8')}`).digest('base64');
  return String(req.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

async function rowsAtLeast(count: number): Promise<{ route: string; guardrails: string | null; status: number }[]> {
  for (let i = 0; i < 100; i++) {
    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').select(['route', 'guardrails', 'status']).execute();
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${count} request-log rows`);
}

describe('http guard: verdicts', () => {
  it('redacts the spans the service names (code-point offsets) before the upstream sees them; the check is signed and carries every text', async () => {
    await chat('names-service-chat', `Hi 👋, I am ${NAME}, hello.`);
    expect(userText(fake.last!)).toEqual(['Be brief.', 'Hi 👋, I am [REDACTED:name], hello.']);
    const check = guard.last!;
    expect(check.body).toMatchObject({ guardrail: 'names-service', stage: 'input', model: 'names-service-chat', workspace_id: gw.workspace.id, texts: ['Be brief.', `Hi 👋, I am ${NAME}, hello.`] });
    expect(signatureValid(check)).toBe(true);
    expect(Math.abs(Number(check.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
  });

  it('puts whole texts the service rewrote in their places (a Messages request, official Anthropic SDK); an unsigned guard gets no signature', async () => {
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
    await anthropic.messages.create({ model: 'rewrite-service-chat', max_tokens: 8, messages: [{ role: 'user', content: `Write to ${NAME}.` }] });
    expect(JSON.stringify(fake.last!.body)).toContain('Write to a customer.');
    expect(fake.last!.raw.toString()).not.toContain(NAME);
    expect(guard.last!.headers['webhook-signature']).toBeUndefined();
  });

  it('a block verdict is a 400 the OpenAI SDK raises naming the guardrail; nothing is sent upstream', async () => {
    const err = await chat('policy-service-chat', 'Tell me about the forbidden topic.').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    expect((err as Error).message).toContain('"policy-service"');
    expect(fake.requests).toHaveLength(0);
    // allow: passed as it was.
    await chat('policy-service-chat', 'A fine topic.');
    expect(userText(fake.last!)[1]).toBe('A fine topic.');
  });

  it('an answer outside the protocol fails closed: a 400 saying the check failed', async () => {
    const err = await chat('broken-service-chat', 'hello').catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/"broken-service": its check failed/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('http guard: a service that hangs past its deadline', () => {
  it('fails open where configured: the request goes on, its verdict a pass marked timeout', async () => {
    const started = Date.now();
    const answer = await chat('hang-open-chat', 'hello');
    expect(answer.choices[0].message.content).toBe('Noted.');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(guard.requests.map((r) => r.path)).toEqual(['/hang']);
  });

  it('fails closed where configured: a 400 naming the guardrail, the upstream never called', async () => {
    const err = await chat('hang-closed-chat', 'hello').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/"hang-closed": its check did not answer in time/);
    expect(fake.requests).toHaveLength(0);
  });

  it('records both in the request log (failed: timeout) and logs a warning naming the guardrail, never the text', async () => {
    // Seven requests above; a row is written once its answer is done.
    const rows = await rowsAtLeast(7);
    const verdicts = rows.flatMap((r) => (r.guardrails ? (JSON.parse(r.guardrails) as Record<string, unknown>[]) : []));
    expect(verdicts).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'hang-open', verdict: 'pass', failed: 'timeout' }), expect.objectContaining({ id: 'hang-closed', verdict: 'block', failed: 'timeout' })]));
    expect(logs.lines).toEqual(expect.arrayContaining([expect.objectContaining({ guardrail: 'hang-closed', failed: 'timeout' })]));
    expect(JSON.stringify(rows) + JSON.stringify(logs.lines)).not.toContain(NAME);
  });
});
