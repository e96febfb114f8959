// `limits` guardrails through HTTP with the official SDKs: a request past the longest prompt, with more images than
// allowed, offering a forbidden tool or setting a forbidden parameter is refused with a 400 naming the guardrail and the
// limit, before anything is reserved or sent; a request within them passes; a flag guardrail records and passes.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installResponses } from './kit/fake-responses.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const GUARDRAILS = `
- id: short-prompts
  kind: limits
  limits: { maxPromptTokens: 100 }
  action: block
- id: one-image
  kind: limits
  limits: { maxImages: 1 }
  action: block
- id: no-shell
  kind: limits
  limits: { forbiddenTools: [shell, web_search] }
  action: block
- id: no-knobs
  kind: limits
  limits: { forbiddenParams: [logit_bias, reasoning.effort] }
  action: block
- id: watch-images
  kind: limits
  limits: { maxImages: 0 }
  action: flag
`;
const ROUTES = `
- id: limited-chat
  targets: [{ model: gpt-fake }]
  guardrails: [no-knobs, no-shell, one-image, short-prompts]
- id: limited-claude
  targets: [{ model: claude-fake }]
  guardrails: [no-shell, one-image]
- id: watched-chat
  targets: [{ model: gpt-fake }]
  guardrails: [watch-images]
`;
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const image = { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PIXEL}` } };

let fake: FakeUpstream;
let claudeFake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [fake, claudeFake] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  installResponses(fake);
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
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fake, claudeFake].map((f) => f?.close()));
});
beforeEach(() => {
  for (const f of [fake, claudeFake]) f.reset();
});

/** The refusal a request gets: the SDK's error, checked to be a 400 guardrail_blocked that reached no upstream, and its message as the body gave it. */
async function refusal(request: Promise<unknown>): Promise<Error & { text: string }> {
  const err = (await request.catch((e: unknown) => e)) as Error & { status?: number; error?: { message?: string; error?: { message?: string; code?: string }; code?: string } };
  expect(err).toBeInstanceOf(Error);
  expect(err.status).toBe(400);
  // The OpenAI SDK's error holds the error object, the Anthropic SDK's the whole body.
  expect(err.error?.code ?? err.error?.error?.code).toBe('guardrail_blocked');
  expect(fake.requests.length + claudeFake.requests.length).toBe(0);
  return Object.assign(err, { text: err.error?.error?.message ?? err.error?.message ?? err.message });
}

const chat = (content: OpenAI.Chat.ChatCompletionContentPart[] | string, extra: Record<string, unknown> = {}) =>
  openai.chat.completions.create({ model: 'limited-chat', messages: [{ role: 'user', content }], ...extra } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);

describe('limits', () => {
  it('passes a request within every limit', async () => {
    const answer = await chat([{ type: 'text', text: 'What is this?' }, image]);
    expect(answer.choices[0].message.content).toBeTruthy();
    expect(fake.requests).toHaveLength(1);
  });

  it('refuses the longest prompt passed, naming the guardrail and the limit', async () => {
    const err = await refusal(chat('word '.repeat(200)));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.text).toMatch(/guardrail "short-prompts": limit maxPromptTokens: about \d+ tokens, at most 100/);
  });

  it('refuses more images than allowed, in chat and in Messages (official Anthropic SDK)', async () => {
    expect((await refusal(chat([{ type: 'text', text: 'Compare.' }, image, image]))).text).toContain('guardrail "one-image": limit maxImages: 2 images, at most 1');
    const block = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: PIXEL } };
    const err = await refusal(anthropic.messages.create({ model: 'limited-claude', max_tokens: 8, messages: [{ role: 'user', content: [block, block, { type: 'text', text: 'Compare.' }] }] }));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.text).toContain('limit maxImages');
  });

  it('refuses a forbidden tool by its name: a chat function, a Messages tool, a Responses server tool by its type', async () => {
    const shell = { type: 'function' as const, function: { name: 'shell', parameters: { type: 'object', properties: {} } } };
    expect((await refusal(chat('ls', { tools: [shell] }))).text).toContain('guardrail "no-shell": limit forbiddenTools: tool "shell" may not be offered');
    const err = await refusal(anthropic.messages.create({ model: 'limited-claude', max_tokens: 8, tools: [{ name: 'shell', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'ls' }] }));
    expect(err.text).toContain('tool "shell"');
    const searched = await refusal(openai.responses.create({ model: 'limited-chat', input: 'news?', tools: [{ type: 'web_search' }] }));
    expect(searched.text).toContain('tool "web_search"');
  });

  it('refuses a forbidden parameter, top-level or by dotted path', async () => {
    expect((await refusal(chat('hi', { logit_bias: { '50256': -100 } }))).text).toContain('guardrail "no-knobs": limit forbiddenParams: "logit_bias" may not be set');
    expect((await refusal(openai.responses.create({ model: 'limited-chat', input: 'hi', reasoning: { effort: 'high' } }))).text).toContain('"reasoning.effort" may not be set');
  });

  it('a flag guardrail passes the request and records the limit passed', async () => {
    const { response } = await openai.chat.completions.create({ model: 'watched-chat', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] }] }).withResponse();
    expect(fake.requests).toHaveLength(1);
    const requestId = response.headers.get('x-request-id')!;
    let row: { guardrails: string | null } | undefined;
    for (let i = 0; i < 100 && !row; i++) {
      await gw.services.requestLogs.commitQueued();
      row = await gw.services.db.selectFrom('request_logs').select('guardrails').where('request_id', '=', requestId).executeTakeFirst();
      if (!row) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(JSON.parse(row!.guardrails!)).toEqual([expect.objectContaining({ id: 'watch-images', verdict: 'flag', matches: { maxImages: 1 } })]);
  });
});
