// Issue 45 items 1 and 2: a relayed family's usage is bounded by what its request makes possible, on the shipped models
// that declare no `limits` (embeddings, rerank, whisper): tokens by the request's bytes, search units by documents x
// queries, seconds by the upload's decoded duration or the model's maxAudioSeconds. Past the bound the answer is
// upstream_malformed, charged the reservation and logged, never booked as overage. A WAV whose header under-states its
// length is measured by the samples it carries: its reservation, and so a capped key's concurrent uploads, hold.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { FAKE_USAGE, FakeFamilies } from './kit/fake-families.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';

let fake: FakeFamilies;
let gw: TestGateway;
let key: string;
const logs = captureLogs('warn');

/** A shipped channel file with its base URL pointed at the fake. */
const shipped = (file: string, baseUrl: string) => readFileSync(join(repoRoot, 'channels', file), 'utf8').replace(/^baseUrl: .*$/m, `baseUrl: ${baseUrl}`);

beforeAll(async () => {
  fake = await FakeFamilies.start();
  gw = await startGateway({
    env: { OPENAI_API_KEY: 'sk-openai-test', COHERE_API_KEY: 'co-test' },
    channels: { openai: shipped('openai.yaml', `${fake.url}/v1`), cohere: shipped('cohere.yaml', fake.url) },
    logger: logs.logger,
  });
  key = await gw.newKey({ spendCapMicros: 1_000_000 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.usage = structuredClone(FAKE_USAGE);
});

/**
 * A WAV of 8 kHz mono 16-bit silence: `seconds` of samples, its header declaring `declared` seconds (the same unless it lies).
 */
function wav(seconds: number, declared = seconds): Buffer {
  const data = seconds * 16_000;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + declared * 16_000, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(declared * 16_000, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

/** A whisper-1 transcription of `file` with `apiKey`, as the openai SDK sends it. */
function transcribe(file: Buffer, filename = 'note.wav', apiKey = key) {
  const form = new FormData();
  form.append('model', 'whisper-1');
  form.append('file', new Blob([new Uint8Array(file)], { type: filename.endsWith('.wav') ? 'audio/wav' : 'audio/mpeg' }), filename);
  const request = new Request('http://gateway/v1/audio/transcriptions', { method: 'POST', body: form });
  return request.arrayBuffer().then((body) =>
    gw.app.inject({ method: 'POST', url: '/v1/audio/transcriptions', headers: { authorization: `Bearer ${apiKey}`, 'content-type': request.headers.get('content-type')! }, payload: Buffer.from(body) }),
  );
}

const post = (url: string, payload: object) => gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });

/** 502 upstream_malformed, one ledger row at exactly the reservation with no overage, and the warning that says why. */
async function expectChargedReservation(res: Awaited<ReturnType<typeof post>>, reservedMicros: number) {
  expect(res.statusCode, res.body).toBe(502);
  expect(res.json().error.code).toBe('upstream_malformed');
  const rows = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
  expect(rows.map((r) => [Number(r.cost_micros), Number(r.overage_micros)])).toEqual([[reservedMicros, 0]]);
  const line = await logs.next((l) => l.msg === 'upstream reported impossible usage; charging the reservation, no overage' && l.reservedMicros === reservedMicros);
  expect(line.reason).toMatch(/malformed answer: usage reports \d+ /);
}

describe('usage a relayed request makes impossible, on models without limits', () => {
  it('embeddings: 1e15 tokens for a 17-byte input are malformed, charged the reservation, not $20,000,000', async () => {
    fake.usage.embeddingTokens = 1e15;
    const body = { model: 'text-embedding-3-small', input: 'seventeen bytes!!' };
    const res = await post('/v1/embeddings', body);
    // The reservation: the body's bytes as tokens (3 bytes a token, rounded up) at $0.02 per million.
    await expectChargedReservation(res, Math.round(Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 3) * 0.02));
  });

  it('rerank: 1e9 search units for 3 documents are malformed, charged the reservation (one unit), not $2,500,000', async () => {
    fake.usage.searchUnits = 1e9;
    const res = await post('/v1/rerank', { model: 'rerank-v4.0-pro', query: 'capital?', documents: ['Paris', 'Berlin', 'Rome'] });
    await expectChargedReservation(res, 2500);
  });

  it('whisper: 1e12 seconds for a 2-second WAV are malformed, charged the 2 seconds reserved', async () => {
    fake.usage.whisperSeconds = 1e12;
    await expectChargedReservation(await transcribe(wav(2)), 200);
  });

  it("whisper: 1e6 seconds for an upload whose length cannot be read pass the model's 1,800 and are malformed, charged the 1,800 reserved", async () => {
    fake.usage.whisperSeconds = 1e6;
    await expectChargedReservation(await transcribe(Buffer.from('ID3 fake mp3 bytes'), 'meeting.mp3'), 180_000);
  });
});

describe('a WAV whose header under-states its length', () => {
  it('is reserved and charged for the 30 seconds it carries (header: 1 s), no overage booked', async () => {
    fake.usage.whisperSeconds = 30;
    const res = await transcribe(wav(30, 1));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().cost).toEqual({ amount: 0.003, currency: 'USD' });
    const rows = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(rows.map((r) => [Number(r.cost_micros), Number(r.overage_micros)])).toEqual([[3000, 0]]);
  });

  it('admits only what fits: 20 concurrent lying uploads (20 s each, header 1 s) on a $0.005 cap admit 2', async () => {
    fake.usage.whisperSeconds = 20;
    const capped = await gw.newKey({ spendCapMicros: 5000 });
    const statuses = await Promise.all(Array.from({ length: 20 }, () => transcribe(wav(20, 1), 'note.wav', capped).then((r) => r.statusCode)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 402)).toBe(true);
    const spent = await gw.services.db.selectFrom('usage_ledger').innerJoin('api_keys', 'api_keys.id', 'usage_ledger.key_id').select('cost_micros').where('api_keys.spend_cap_micros', '=', 5000).execute();
    expect(spent.reduce((sum, r) => sum + Number(r.cost_micros), 0)).toBe(4000);
  });
});
