// The shipped chat vendor channels: every file loads, and one chat request per vendor, sent with the official openai SDK,
// reaches a fake OpenAI-compatible upstream (the channel's base URL rewritten to it) with the vendor's model id, its key
// (none for the keyless local one), and is charged the vendor's price times the usage the upstream reported.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { parse } from 'yaml';
import { loadConfig } from '../src/compile/load-config.js';
import { tokenCostMicros } from '../src/billing/cost.js';
import type { PriceConfig } from '../src/config/types.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { newServiceAccount } from './kit/fake-cloud-auth.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

interface ShippedModel {
  id: string;
  upstream?: string;
  kind: string;
  price: PriceConfig;
}
interface ShippedChannel {
  id: string;
  baseUrl: string;
  requiresEnv?: string[];
  /** One credential, or alternatives (the cloud channels): each field ending in `Env` names a variable. */
  credential?: { env: string; secretEnv?: string } & Record<string, string>;
  models: ShippedModel[];
}

const channelsDir = join(repoRoot, 'channels');
const files = readdirSync(channelsDir).filter((name) => name.endsWith('.yaml'));
const text = (file: string) => readFileSync(join(channelsDir, file), 'utf8');
const shipped = new Map(files.map((file) => [file, parse(text(file)) as ShippedChannel]));

/** The OpenAI-compatible chat vendors of issue 24, each with the model driven through it. */
const vendors: Record<string, string> = {
  'gemini.yaml': 'gemini-3.8-flash',
  'deepseek.yaml': 'deepseek-flash',
  'mistral.yaml': 'mistral-large-latest',
  'xai.yaml': 'grok-4.3',
  'groq.yaml': 'llama-3.1-8b-instant',
  'together.yaml': 'moonshotai/Kimi-K2.6',
  'openrouter.yaml': 'anthropic/claude-sonnet-4.6',
  'ollama.yaml': 'llama3.3',
  'vllm.yaml': 'Qwen/Qwen3-8B',
};

/** A value a variable of this name can hold (the cloud channels read endpoints and regions into their base URLs). */
const valueFor = (name: string) => (/ENDPOINT/.test(name) ? 'https://endpoint.example' : /REGION|LOCATION/.test(name) ? 'us-east-1' : `key-${name}`);
/** A service-account key file, for the channels whose credential reads one when the config loads. */
const keyFile = join(mkdtempSync(join(tmpdir(), 'vendor-channels-')), 'service-account.json');
writeFileSync(keyFile, newServiceAccount().keyFile('https://oauth2.googleapis.com/token'));

/** Every variable the shipped channels read, set: each key is its variable's name (a key file's, its path). */
const env: Record<string, string> = { OLLAMA_ENABLED: 'true' };
for (const { credential, requiresEnv } of shipped.values()) {
  for (const name of requiresEnv ?? []) env[name] = valueFor(name);
  for (const alternative of credential ? [credential].flat() : []) {
    for (const [field, name] of Object.entries(alternative)) {
      if (field === 'env') env[name] = `key-${name}`;
      else if (field === 'secretEnv') env[name] = `secret-${name}`;
      else if (field === 'keyFileEnv') env[name] = keyFile;
      else if (field.endsWith('Env') && typeof name === 'string') env[name] = valueFor(name);
    }
  }
}

// Usage the fake reports: 20,000 prompt tokens of which 8,000 cached, 10,000 completion tokens (within every limit).
const usage = { inputTokens: 20_000, cachedInputTokens: 8_000, outputTokens: 10_000 };

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.chat = { text: 'Hello from a vendor.', usage: { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, cached_tokens: usage.cachedInputTokens } };
  // Each vendor's base URL moves to the fake, under a path of its own: the path the request arrives on names the channel.
  const channels = Object.fromEntries(
    files.map((file) => [file, file in vendors ? text(file).replace(/^baseUrl: .*$/m, `baseUrl: ${fake.url}/${shipped.get(file)!.id}/v1`) : text(file)]),
  );
  gw = await startGateway({ channels, env, listen: true });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('the shipped channel files', () => {
  it('load together with the example config, every channel enabled once its variables are set', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: { ...process.env, ...env } });
    expect(config.channels.map((c) => `${c.id}.yaml`).sort()).toEqual([...files].sort());
    for (const channel of config.channels) expect(channel.disabledReason, channel.id).toBeUndefined();
    for (const file of Object.keys(vendors)) expect(files, file).toContain(file);
  });

  it('leave a keyless local channel off until it is asked for, and a keyed one off until its key is set', async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
    const byId = new Map(config.channels.map((c) => [c.id, c]));
    expect(byId.get('ollama')!.disabledReason).toMatch(/disabled in channels\/ollama\.yaml/);
    expect(byId.get('mistral')!.disabledReason).toMatch(/MISTRAL_API_KEY is not set/);
    expect(config.models.has('llama3.3')).toBe(true);
  });
});

describe('one chat completion per vendor channel, through the openai SDK', () => {
  const openai = () => new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  for (const [file, modelId] of Object.entries(vendors)) {
    it(`${file}: ${modelId} reaches the vendor as its upstream id and costs its price x usage`, async () => {
      const channel = shipped.get(file)!;
      const model = channel.models.find((m) => m.id === modelId)!;
      expect(model.kind).toBe('chat');
      const completion = await openai().chat.completions.create({ model: modelId, messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.choices[0].message.content).toBe('Hello from a vendor.');
      expect(completion.model).toBe(modelId);

      const request = fake.requests.find((r) => r.path.startsWith(`/${channel.id}/`))!;
      expect(request.path).toBe(`/${channel.id}/v1/chat/completions`);
      expect(request.body.model).toBe(model.upstream ?? model.id);
      expect(request.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
      expect(request.headers.authorization).toBe(channel.credential ? `Bearer key-${channel.credential.env}` : undefined);

      const micros = Math.round(
        (usage.inputTokens - usage.cachedInputTokens) * (model.price.inputPerMillion ?? 0) +
          usage.cachedInputTokens * (model.price.cachedInputPerMillion ?? model.price.inputPerMillion ?? 0) +
          usage.outputTokens * (model.price.outputPerMillion ?? 0),
      );
      expect(micros).toBe(tokenCostMicros(model.price, usage));
      expect((completion as unknown as { cost: unknown }).cost).toEqual({ amount: micros / 1e6, currency: 'USD' });
    });
  }

  it('streams from a vendor, with usage and cost on the final chunk', async () => {
    const stream = await openai().chat.completions.create({ model: 'llama-3.1-8b-instant', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let last: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      last = chunk;
    }
    expect(text).toBe('Hello from a vendor.');
    // Groq's llama-3.1-8b-instant: $0.05 in (no cache discount), $0.08 out per million: 20,000 x 0.05 + 10,000 x 0.08.
    expect(last).toMatchObject({ usage: { prompt_tokens: 20_000, completion_tokens: 10_000 }, cost: { amount: 0.0018, currency: 'USD' } });
  });

  it('takes an Anthropic Messages client on a vendor channel, translated to chat with the vendor\'s output bound', async () => {
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'deepseek-v4-pro', max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 20_000 }, messages: [{ role: 'user', content: 'hi' }] });
    expect(message).toMatchObject({ type: 'message', model: 'deepseek-v4-pro', content: [{ type: 'text', text: 'Hello from a vendor.' }] });
    // deepseek-v4-pro, retired by DeepSeek on 2026-09-14, is an alias of deepseek-flash (the model DeepSeek serves it
    // with), a reasoning model whose outputBound is max_tokens: the bound and a reasoning effort from the thinking budget.
    expect(fake.last!.body).toMatchObject({ model: 'deepseek-flash', max_tokens: 64, reasoning_effort: 'high' });
    expect(fake.last!.body.max_completion_tokens).toBeUndefined();
  });

  it("relays Mistral's 422 for a field it does not take as a 400 naming the field", async () => {
    const body = { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'store'], msg: 'Extra inputs are not permitted', input: true }] }, type: 'invalid_request_error', param: null, code: null };
    fake.next({ kind: 'json', status: 422, body }, (r) => r.path.startsWith('/mistral/'));
    const err = await openai().chat.completions.create({ model: 'mistral-large-latest', store: true, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as Error).message).toContain('Extra inputs are not permitted: body.store');
    // The pass-through relayed the field: the engine has no refusal table for pass-through routes (docs/protocols.md).
    expect(fake.last!.body.store).toBe(true);
  });

  it("relays Gemini's error given as a list, with its message", async () => {
    const body = [{ error: { code: 400, message: 'Invalid JSON payload received. Unknown name "store": Cannot find field.', status: 'INVALID_ARGUMENT' } }];
    fake.next({ kind: 'json', status: 400, body }, (r) => r.path.startsWith('/gemini/'));
    const err = await openai().chat.completions.create({ model: 'gemini-3.8-flash', store: true, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as Error).message).toContain('Unknown name "store"');
  });

  it('reads DeepSeek cache hits from prompt_cache_hit_tokens, which it reports instead of prompt_tokens_details', async () => {
    const body = {
      id: 'chatcmpl-ds',
      object: 'chat.completion',
      created: 1,
      model: 'deepseek-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20_000, completion_tokens: 10_000, total_tokens: 30_000, prompt_cache_hit_tokens: 8_000, prompt_cache_miss_tokens: 12_000 },
    };
    fake.next({ kind: 'json', body }, (r) => r.path.startsWith('/deepseek/'));
    const completion = await openai().chat.completions.create({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }] });
    // 12,000 x 0.30 + 8,000 x 0.006 + 10,000 x 1.20 per million: 3,600 + 48 + 12,000 micros.
    expect((completion as unknown as { cost: unknown }).cost).toEqual({ amount: 0.015648, currency: 'USD' });
  });
});
