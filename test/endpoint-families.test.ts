// The endpoint families besides chat, as the shipped catalogue and channel files declare them: the official openai SDK's
// embeddings, moderations, audio transcriptions, translations and speech, and a Cohere v2 rerank call, against fakes of
// the vendors' APIs, each billed at the price shipped in channels/openai.yaml and channels/cohere.yaml.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { EMBEDDING_INPUT, FAKE_USAGE, FakeFamilies, SPEECH_CHUNKS } from './kit/fake-families.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeFamilies;
let gw: TestGateway;
let client: OpenAI;

/** A shipped channel file with its base URL pointed at the fake. */
const shipped = (file: string, baseUrl: string) => readFileSync(join(repoRoot, 'channels', file), 'utf8').replace(/^baseUrl: .*$/m, `baseUrl: ${baseUrl}`);

beforeAll(async () => {
  fake = await FakeFamilies.start();
  gw = await startGateway({
    listen: true,
    env: { OPENAI_API_KEY: 'sk-openai-test', COHERE_API_KEY: 'co-test', MISTRAL_API_KEY: 'mistral-test', VLLM_API_KEY: 'vllm-test' },
    channels: {
      openai: shipped('openai.yaml', `${fake.url}/v1`),
      cohere: shipped('cohere.yaml', fake.url),
      mistral: shipped('mistral.yaml', `${fake.url}/v1`),
      'vllm-embeddings': shipped('vllm-embeddings.yaml', `${fake.url}/v1`),
      // One cent a call and nothing per token: its worst case is its cost, so a cap counts calls exactly.
      flat: `id: flat\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: flat-embed\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { perRequest: 0.01 }\n`,
    },
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** Bytes that are no audio format the gateway can read a duration from (the fake does not care). */
const audio = () => toFile(Buffer.from('ID3 fake mp3 bytes'), 'meeting.mp3', { type: 'audio/mpeg' });

/** A real WAV file of `seconds` of silence (8 kHz, mono, 16-bit): its duration is in its header. */
function wav(seconds: number): Buffer {
  const data = Math.round(seconds * 8000) * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}
const costOf = (answer: unknown) => (answer as { cost: unknown }).cost;
const usd = (amount: number) => ({ amount, currency: 'USD' });
const last = () => fake.requests[fake.requests.length - 1];
/** whisper-1 answers without usage, on an upload whose duration cannot be read, are charged the reservation: the model's media.maxAudioSeconds (1800) at $0.006 a minute. */
const WHISPER_RESERVED = 0.18;
/** The 3 seconds the fake's whisper-1 reports, at $0.006 a minute. */
const WHISPER_3S = 0.0003;

describe('POST /v1/embeddings', () => {
  it('embeds as floats, the model relayed and billed at $0.02 per million input tokens', async () => {
    const answer = await client.embeddings.create({ model: 'text-embedding-3-small', input: EMBEDDING_INPUT, encoding_format: 'float' });
    expect(answer.data[0].embedding).toHaveLength(4);
    expect(answer.model).toBe('text-embedding-3-small');
    expect(costOf(answer)).toEqual(usd((FAKE_USAGE.embeddingTokens * 0.02) / 1e6));
    expect(last()).toMatchObject({ path: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: EMBEDDING_INPUT, encoding_format: 'float' } });
    expect(last().headers.authorization).toBe('Bearer sk-openai-test');
  });

  it('embeds as base64 (the SDK decodes it) with dimensions, at $0.13 per million', async () => {
    const answer = await client.embeddings.create({ model: 'text-embedding-3-large', input: [EMBEDDING_INPUT, 'b'], dimensions: 8 });
    expect(answer.data.map((d) => d.embedding.length)).toEqual([8, 8]);
    expect(last().body).toMatchObject({ encoding_format: 'base64', dimensions: 8 });
    expect(costOf(answer)).toEqual(usd((FAKE_USAGE.embeddingTokens * 0.13) / 1e6));
  });

  it("embeds on another shipped vendor (Mistral's mistral-embed, $0.10 per million)", async () => {
    const answer = await client.embeddings.create({ model: 'mistral-embed', input: EMBEDDING_INPUT, encoding_format: 'float' });
    expect(costOf(answer)).toEqual(usd((FAKE_USAGE.embeddingTokens * 0.1) / 1e6));
    expect(last().headers.authorization).toBe('Bearer mistral-test');
  });

  it('embeds on a local vLLM embedding server (BAAI/bge-m3, its key, no price)', async () => {
    const answer = await client.embeddings.create({ model: 'BAAI/bge-m3', input: EMBEDDING_INPUT, encoding_format: 'float' });
    expect(answer.data[0].embedding).toHaveLength(4);
    expect(costOf(answer)).toEqual(usd(0));
    expect(last()).toMatchObject({ path: '/v1/embeddings', body: { model: 'BAAI/bge-m3', input: EMBEDDING_INPUT } });
    expect(last().headers.authorization).toBe('Bearer vllm-test');
  });

  it('gives a key capped for N calls exactly N, then 402', async () => {
    const capped = new OpenAI({ apiKey: await gw.newKey({ spendCapMicros: 3 * 10_000 }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) expect(costOf(await capped.embeddings.create({ model: 'flat-embed', input: EMBEDDING_INPUT }))).toEqual(usd(0.01));
    const err = await capped.embeddings.create({ model: 'flat-embed', input: 'one more' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(402);
  });

  it('refuses a key without llm.embeddings (403) and a chat model (400)', async () => {
    const chatOnly = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.chat'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const denied = await chatOnly.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e) => e);
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const wrong = await client.embeddings.create({ model: 'gpt-4o-mini', input: 'x' }).catch((e) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    expect(wrong.message).toContain('POST /api/v1/chat/completions');
  });
});

describe('POST /v1/moderations', () => {
  it('moderates for free, the call still on the ledger', async () => {
    const { data, response } = await client.moderations.create({ model: 'omni-moderation-latest', input: 'a friendly sentence' }).withResponse();
    expect(data.results[0].flagged).toBe(false);
    expect(costOf(data)).toEqual(usd(0));
    const rows = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'omni-moderation-latest', cost_micros: 0 });
  });

  it('moderates a request that names no model with the default of its kind, as OpenAI does (omni-moderation-latest)', async () => {
    const { data, response } = await client.moderations.create({ input: ['one', 'two'] }).withResponse();
    expect(data.results).toHaveLength(2);
    expect(data.model).toBe('omni-moderation-latest');
    expect(costOf(data)).toEqual(usd(0));
    expect(last()).toMatchObject({ path: '/v1/moderations', body: { model: 'omni-moderation-latest', input: ['one', 'two'] } });
    const rows = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(rows[0]).toMatchObject({ model: 'omni-moderation-latest', cost_micros: 0 });
  });

  it('refuses a request without a model on a family with no default model (400 naming model)', async () => {
    const err = await client.embeddings.create({ input: 'x' } as never).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ param: 'model' });
  });
});

describe('POST /v1/audio/transcriptions and /v1/audio/translations', () => {
  it('transcribes (json) with whisper-1, the file name kept, billed by the reported second at $0.006 a minute', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'whisper-1', file: await audio() });
    expect(answer.text).toBe('Hello from the fake audio.');
    expect(costOf(answer)).toEqual(usd(WHISPER_3S));
    expect(last().files.file).toMatchObject({ name: 'meeting.mp3', size: 18 });
    expect(last().body).toMatchObject({ model: 'whisper-1' });
  });

  it('transcribes (json) with gpt-4o-transcribe, billed by token class', async () => {
    const answer = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await audio() });
    const { input_token_details: details, output_tokens: output } = FAKE_USAGE.transcribe;
    expect(costOf(answer)).toEqual(usd((details.text_tokens * 2.5 + details.audio_tokens * 6 + output * 10) / 1e6));
  });

  it('streams a gpt-4o-transcribe transcription as the SDK reads it, the done event with its cost, billed by token class', async () => {
    const stream = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await audio(), stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    const { input_token_details: details, output_tokens: output } = FAKE_USAGE.transcribe;
    const cost = usd((details.text_tokens * 2.5 + details.audio_tokens * 6 + output * 10) / 1e6);
    expect(events.filter((e) => e.type === 'transcript.text.delta').map((e) => (e as { delta: string }).delta).join('')).toBe('Hello from the fake audio.');
    expect(events.at(-1)).toMatchObject({ type: 'transcript.text.done', text: 'Hello from the fake audio.', usage: FAKE_USAGE.transcribe, cost });
    expect(last().body).toMatchObject({ model: 'gpt-4o-transcribe', stream: 'true' });
    const { data, response } = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await audio(), stream: true }).withResponse();
    for await (const _ of data) void _;
    const rows = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(rows[0]).toMatchObject({ model: 'gpt-4o-mini-transcribe', input_tokens: FAKE_USAGE.transcribe.input_tokens, output_tokens: output });
  });

  it('answers whisper-1 with stream: true in JSON, as OpenAI does (it ignores the flag)', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('stream', 'true');
    form.append('file', new Blob([Buffer.from('ID3 fake mp3 bytes')], { type: 'audio/mpeg' }), 'meeting.mp3');
    const response = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: form });
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toMatchObject({ text: 'Hello from the fake audio.', cost: usd(WHISPER_3S) });
  });

  it('transcribes as verbose_json and as text (cost in x-cost)', async () => {
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file: await audio(), response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    expect(verbose.segments).toHaveLength(1);
    expect(costOf(verbose)).toEqual(usd(WHISPER_3S));
    expect(last().body['timestamp_granularities[]']).toBe('segment');
    const { data, response } = await client.audio.transcriptions.create({ model: 'whisper-1', file: await audio(), response_format: 'text' }).withResponse();
    expect(data).toBe('Hello from the fake audio.\n');
    expect(JSON.parse(response.headers.get('x-cost')!)).toEqual(usd(WHISPER_RESERVED));
  });

  it('translates as json, verbose_json and text; an answer without usage is charged the reservation', async () => {
    const json = await client.audio.translations.create({ model: 'whisper-1', file: await audio() });
    expect(json.text).toBe('Hello from the fake audio.');
    expect(costOf(json)).toEqual(usd(WHISPER_RESERVED));
    expect(last().path).toBe('/v1/audio/translations');
    const verbose = await client.audio.translations.create({ model: 'whisper-1', file: await audio(), response_format: 'verbose_json' });
    expect(verbose.text).toBe('Hello from the fake audio.');
    const { data, response } = await client.audio.translations.create({ model: 'whisper-1', file: await audio(), response_format: 'srt' }).withResponse();
    expect(data).toContain('00:00:00,000 --> 00:00:03,000');
    expect(JSON.parse(response.headers.get('x-cost')!)).toEqual(usd(WHISPER_RESERVED));
  });

  it('bills a whisper-1 answer without usage by the upload\'s measured duration, by the started second', async () => {
    const file = await toFile(wav(2.5), 'note.wav', { type: 'audio/wav' });
    const { data, response } = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'text' }).withResponse();
    expect(data).toBe('Hello from the fake audio.\n');
    expect(JSON.parse(response.headers.get('x-cost')!)).toEqual(usd(WHISPER_3S));
    const translated = await client.audio.translations.create({ model: 'whisper-1', file: await toFile(wav(2.5), 'note.wav', { type: 'audio/wav' }) });
    expect(costOf(translated)).toEqual(usd(WHISPER_3S));
    expect(last().files.file).toMatchObject({ name: 'note.wav', size: 44 + 40000 });
  });

  it('refuses a form without its file (400) and a key without audio.transcribe (403)', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    const res = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe('file');
    const chatOnly = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.chat'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    expect(await chatOnly.audio.transcriptions.create({ model: 'whisper-1', file: await audio() }).catch((e) => e)).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('POST /v1/audio/speech', () => {
  it('streams the audio as it arrives, billed per character of input at $15 per million (x-cost)', async () => {
    fake.holdSpeech();
    const response = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(JSON.parse(response.headers.get('x-cost')!)).toEqual(usd((11 * 15) / 1e6));
    const reader = response.body!.getReader();
    // The upstream holds the rest until the first chunk has reached the client: nothing was buffered whole.
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe(SPEECH_CHUNKS[0].toString());
    fake.releaseSpeech();
    const rest: Buffer[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest.push(Buffer.from(chunk.value));
    expect(Buffer.concat([Buffer.from(first.value!), ...rest])).toEqual(Buffer.concat(SPEECH_CHUNKS));
    expect(last().body).toEqual({ model: 'tts-1', voice: 'alloy', input: 'Hello there' });
  });
  it('charges a token-priced speech model, whose audio answer reports no usage, its reservation', async () => {
    const response = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hello there' });
    expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.concat(SPEECH_CHUNKS));
    const cost = JSON.parse(response.headers.get('x-cost')!);
    const [row] = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(cost.amount).toBeGreaterThan(0);
    expect(row.cost_micros).toBe(Math.round(cost.amount * 1e6));
  });
});

describe('POST /v1/rerank (Cohere v2)', () => {
  it('reranks, billed by the search units Cohere reports at $2.50 per thousand (Rerank 4 Pro)', async () => {
    const res = await fetch(`${gw.url}/api/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rerank-v4.0-pro', query: 'capital of France', documents: ['Paris is in France.', 'Berlin is in Germany.', 'Madrid is in Spain.'], top_n: 2 }),
    });
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer.results).toHaveLength(2);
    expect(answer.meta.billed_units.search_units).toBe(1);
    expect(answer.cost).toEqual(usd((FAKE_USAGE.searchUnits * 2.5) / 1000));
    expect(last()).toMatchObject({ path: '/v2/rerank', body: { model: 'rerank-v4.0-pro', top_n: 2 } });
    expect(last().headers.authorization).toBe('Bearer co-test');
  });
});

describe('GET /v1/models', () => {
  it("lists each model's kind, only the kinds the key's scopes reach", async () => {
    const all: { id: string; kind: string }[] = [];
    for await (const model of client.models.list()) all.push(model as unknown as { id: string; kind: string });
    expect(all.find((m) => m.id === 'whisper-1')?.kind).toBe('transcription');
    expect(all.filter((m) => m.kind === 'rerank').map((m) => m.id)).toEqual(['rerank-v4.0-pro', 'rerank-v4.0-fast', 'rerank-v3.5']);
    const embedOnly = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.embeddings'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const kinds = new Set<string>();
    for await (const model of embedOnly.models.list()) kinds.add((model as unknown as { kind: string }).kind);
    expect([...kinds]).toEqual(['embedding']);
  });
});
