// `schema` guardrails through HTTP with the official SDKs: the answer's text must be JSON valid against the operator's
// JSON Schema. A valid answer passes untouched; one that is not JSON, or not valid, ends as its dialect ends a filtered
// answer, naming the guardrail, and is charged what the upstream reported; a request that asks to stream is refused
// (a stream cannot be checked before it goes out); a flag guardrail records and passes.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installResponses, type ResponsesScript } from './kit/fake-responses.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const GUARDRAILS = `
- id: person-json
  kind: schema
  action: block
  schema:
    type: object
    required: [name, age]
    additionalProperties: false
    properties:
      name: { type: string, minLength: 1 }
      age: { type: integer, minimum: 0 }
- id: person-watch
  kind: schema
  action: flag
  schema: { type: object, required: [name] }
`;
const ROUTES = `
- id: person-chat
  targets: [{ model: gpt-fake }]
  guardrails: [person-json]
- id: person-claude
  targets: [{ model: claude-fake }]
  guardrails: [person-json]
- id: watched-chat
  targets: [{ model: gpt-fake }]
  guardrails: [person-watch]
`;

let fake: FakeUpstream;
let claudeFake: FakeUpstream;
let responses: ResponsesScript;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  [fake, claudeFake] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  responses = installResponses(fake);
  gw = await startGateway({
    channels: {
      gpt: `id: gpt\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: gpt-fake\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${claudeFake.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n  - id: claude-fake\n    kind: chat\n    price: { inputPerMillion: 3, outputPerMillion: 4 }\n`,
    },
    files: { 'routes/main.yaml': ROUTES, 'guardrails/main.yaml': GUARDRAILS },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, claudeFake].map((f) => f?.close()));
});
beforeEach(() => {
  for (const f of [fake, claudeFake]) {
    f.reset();
    f.chat = { text: 'unset', usage: { prompt_tokens: 10, completion_tokens: 5 } };
  }
});

const ask = (model: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Who are you, as JSON?' }] }).withResponse();

async function rowOf(requestId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 100; i++) {
    await gw.services.requestLogs.commitQueued();
    const row = await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).executeTakeFirst();
    if (row) return row as Record<string, any>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no request-log row for ${requestId}`);
}

describe('schema: the answer as JSON valid against the schema', () => {
  it('passes a valid answer untouched', async () => {
    fake.chat.text = '{"name": "Ada", "age": 36}';
    const { data } = await ask('person-chat');
    expect(data.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: '{"name": "Ada", "age": 36}' } });
  });

  it('ends an answer that is not JSON as filtered (content_filter), naming the guardrail, charged what the upstream reported', async () => {
    fake.chat.text = 'My name is Ada and I am 36.';
    const { data, response } = await ask('person-chat');
    expect(data.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null, refusal: 'the answer was blocked by guardrail "person-json"' } });
    expect((data as unknown as { guardrail: string }).guardrail).toBe('person-json');
    expect(data.usage?.completion_tokens).toBe(5);
    const row = await rowOf(response.headers.get('x-request-id')!);
    expect(JSON.parse(row.guardrails)).toEqual([expect.objectContaining({ id: 'person-json', stage: 'output', verdict: 'block', matches: { not_json: 1 } })]);
    expect(row.cost_micros).toBeGreaterThan(0);
  });

  it('ends JSON that breaks the schema as filtered (a required member missing)', async () => {
    fake.chat.text = '{"name": "Ada"}';
    const { data } = await ask('person-chat');
    expect(data.choices[0].finish_reason).toBe('content_filter');
  });

  it('a Messages answer that breaks the schema stops with refusal and no content (official Anthropic SDK)', async () => {
    claudeFake.chat.text = '{"name": "Ada", "age": -1}';
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'person-claude', max_tokens: 64, messages: [{ role: 'user', content: 'JSON please' }] });
    expect(message).toMatchObject({ stop_reason: 'refusal', content: [], guardrail: 'person-json' });
  });

  it('checks a Responses answer whole: valid passes, invalid is incomplete for content_filter', async () => {
    responses.text = '{"name": "Ada", "age": 36}';
    expect((await openai.responses.create({ model: 'person-chat', input: 'JSON please' })).output_text).toBe('{"name": "Ada", "age": 36}');
    responses.text = '{"name": "Ada", "age": "36"}';
    const refused = await openai.responses.create({ model: 'person-chat', input: 'JSON please' });
    expect(refused).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] });
  });

  it('refuses a request that asks to stream with a 400 naming the guardrail: a stream cannot be checked whole before it goes out', async () => {
    const err = await openai.chat.completions.create({ model: 'person-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('guardrail "person-json": it checks whole answers; ask without stream');
    expect(fake.requests).toHaveLength(0);
  });

  it('a flag guardrail passes a breaking answer and records it; streams pass it', async () => {
    fake.chat.text = '[1, 2, 3]';
    const { data, response } = await ask('watched-chat');
    expect(data.choices[0].message.content).toBe('[1, 2, 3]');
    expect(JSON.parse((await rowOf(response.headers.get('x-request-id')!)).guardrails)).toEqual([expect.objectContaining({ id: 'person-watch', verdict: 'flag', matches: { schema: 1 } })]);
    const stream = await openai.chat.completions.create({ model: 'watched-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[1, 2, 3]');
  });
});
