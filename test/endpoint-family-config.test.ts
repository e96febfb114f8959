// An endpoint family the gateway has never seen, added by a config alone: the legacy POST /v1/completions as a catalogue
// entry, its request's JSON Schema and a protocol operation (YAML and JSON Schema, no code), served to the official
// openai SDK's completions.create and billed by the usage the fake reports.
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { json } from './kit/fake-http.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

/** The operator's files: the catalogue entry, the request schema and the protocol, as docs/endpoints.md writes them. */
export const completionsFamily = {
  catalogue: `- name: completions
  modelKind: completion
  method: [POST]
  path: /v1/completions
  scope: llm.completions
  requestSchema: requests/completions
  bodyLimit: 1048576
  handler: pipeline
  pipeline: { dialect: relay, operation: completions }
`,
  schema: JSON.stringify({
    $id: 'requests/completions',
    type: 'object',
    required: ['model', 'prompt'],
    properties: { model: { type: 'string', minLength: 1 }, prompt: { type: ['string', 'array'] }, max_tokens: { type: 'integer', minimum: 1 }, stream: { const: false } },
  }),
  protocol: `id: legacy-completions
dialect: relay
auth: { header: authorization, value: "Bearer {{ credential }}" }
operations:
  completions:
    path: /completions
    usage:
      from: "{{ answer.usage }}"
      tokens: { inputTokens: "{{ usage.prompt_tokens }}", outputTokens: "{{ usage.completion_tokens }}" }
`,
};

let upstream: Server;
let upstreamUrl = '';
const seen: Record<string, unknown>[] = [];
let gw: TestGateway;

beforeAll(async () => {
  // The legacy completions answer of OpenAI's API reference.
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    seen.push({ path: req.url, ...body });
    json(res, 200, { id: 'cmpl-fake', object: 'text_completion', created: 1, model: body.model, choices: [{ text: ' world', index: 0, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gw = await startGateway({
    listen: true,
    extraConfig: 'endpoints:\n  catalogueDir: ./catalogue\n  schemasDir: ./schemas\n',
    files: { 'catalogue/completions.yaml': completionsFamily.catalogue, 'schemas/completions.json': completionsFamily.schema },
    protocols: { 'legacy-completions.yaml': completionsFamily.protocol },
    channels: {
      legacy: `id: legacy\nprotocol: legacy-completions\nbaseUrl: ${upstreamUrl}\nmodels:\n  - id: instruct\n    upstream: gpt-3.5-turbo-instruct\n    kind: completion\n    price: { inputPerMillion: 1500, outputPerMillion: 2000 }\n`,
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe('an endpoint family added by config alone (legacy completions)', () => {
  it('serves completions.create through the official openai SDK, the model mapped, billed by reported usage', async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    const completion = await client.completions.create({ model: 'instruct', prompt: 'Hello', max_tokens: 5 });
    expect(completion.choices[0].text).toBe(' world');
    expect(completion.model).toBe('instruct');
    expect((completion as unknown as { cost: unknown }).cost).toEqual({ amount: (5 * 1500 + 2 * 2000) / 1e6, currency: 'USD' });
    expect(seen.at(-1)).toEqual({ path: '/v1/completions', model: 'gpt-3.5-turbo-instruct', prompt: 'Hello', max_tokens: 5 });
  });

  it('checks the request against the operator schema (400) and the declared scope (403)', async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const bad = await client.completions.create({ model: 'instruct', prompt: 'x', max_tokens: 0 }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    const chatOnly = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.chat'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    expect(await chatOnly.completions.create({ model: 'instruct', prompt: 'x' }).catch((e) => e)).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const scoped = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.completions'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    expect((await scoped.completions.create({ model: 'instruct', prompt: 'x' })).choices).toHaveLength(1);
  });

  it('refuses, with file:line:col, an entry naming a schema nobody declared and a model of a kind no endpoint serves', async () => {
    // The running gateway read its files at start; a second load of the same folder sees these.
    writeFileSync(join(gw.dir, 'catalogue', 'broken.yaml'), '- name: broken\n  method: [POST]\n  path: /v1/broken\n  requestSchema: requests/nowhere\n  handler: pipeline\n  pipeline: { dialect: relay, operation: completions }\n');
    writeFileSync(join(gw.dir, 'channels', 'odd.yaml'), `id: odd\nprotocol: legacy-completions\nbaseUrl: ${upstreamUrl}\nmodels:\n  - id: odd\n    kind: nowhere\n    price: { perRequest: 0.01 }\n`);
    // The test database's URL is all the environment this config reads (the PostgreSQL run names no URL in the file).
    const problems = await loadConfig(join(gw.dir, 'config.yaml'), { env: { DATABASE_URL: process.env.DATABASE_URL } }).then(
      () => [],
      (err: ConfigError) => err.problems,
    );
    expect(problems).toEqual([
      expect.stringMatching(/catalogue\/broken\.yaml:4:\d+ \/0\/requestSchema no schema with \$id "requests\/nowhere"/),
      expect.stringMatching(/channels\/odd\.yaml:6:\d+ \/models\/0\/kind model "odd" is of kind "nowhere", which no endpoint serves/),
    ]);
  });
});
