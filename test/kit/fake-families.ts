// A fake of the endpoint families besides chat, built from the vendors' API references: OpenAI's embeddings,
// moderations, audio transcriptions, translations and speech (platform.openai.com/docs/api-reference) and Cohere's
// v2 rerank (docs.cohere.com/reference/rerank), on 127.0.0.1. It records what it was sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from './fake-http.js';

export interface RecordedFamilyRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body, or a form's text fields. */
  body: Record<string, unknown>;
  /** A form's files by field: name, type and size. */
  files: Record<string, { name: string; type: string; size: number }>;
}

/** Speech audio, sent in three chunks; the second waits until `releaseSpeech()` is called. */
export const SPEECH_CHUNKS = [Buffer.from('ID3-first-chunk-'), Buffer.from('second-chunk-'), Buffer.from('last')];

/**
 * Usage the fake reports: an embedding call's prompt tokens (as many as an input of EMBEDDING_INPUT's size may hold, no
 * more: the gateway refuses tokens past a request's bytes), whisper's seconds, gpt-4o transcription's tokens.
 */
export const FAKE_USAGE = {
  embeddingTokens: 1_000,
  whisperSeconds: 3,
  transcribe: { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 4, audio_tokens: 10 }, output_tokens: 45, total_tokens: 59 },
  searchUnits: 1,
};

/** An embedding input of 1,000 bytes: room for the tokens the fake reports. */
export const EMBEDDING_INPUT = 'hello '.repeat(166) + 'hello';

const TEXT = 'Hello from the fake audio.';

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function vector(dimensions: number, seed: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => Math.round(Math.sin(seed + i) * 1000) / 1000);
}

function embeddings(res: ServerResponse, body: Record<string, unknown>, usage: FamilyUsage) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 4;
  const data = inputs.map((_, index) => {
    const floats = vector(dimensions, index);
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(floats).buffer).toString('base64') : floats;
    return { object: 'embedding', index, embedding };
  });
  json(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: usage.embeddingTokens, total_tokens: usage.embeddingTokens } });
}

function moderations(res: ServerResponse, body: Record<string, unknown>) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const result = { flagged: false, categories: { violence: false, harassment: false }, category_scores: { violence: 0.0001, harassment: 0.0002 }, category_applied_input_types: { violence: ['text'], harassment: ['text'] } };
  json(res, 200, { id: 'modr-fake', model: body.model, results: inputs.map(() => result) });
}

/** A transcription or translation answer in the format asked for; whisper-1 reports seconds, the gpt-4o models tokens. */
function audioText(res: ServerResponse, path: string, fields: Record<string, unknown>, reported: FamilyUsage) {
  const format = (fields.response_format as string | undefined) ?? 'json';
  const translation = path.endsWith('/translations');
  const usage = fields.model === 'whisper-1' ? { type: 'duration', seconds: reported.whisperSeconds } : reported.transcribe;
  if (format === 'text') return text(res, 'text/plain; charset=utf-8', `${TEXT}\n`);
  if (format === 'srt') return text(res, 'text/plain; charset=utf-8', `1\n00:00:00,000 --> 00:00:03,000\n${TEXT}\n\n`);
  if (format === 'vtt') return text(res, 'text/vtt; charset=utf-8', `WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n${TEXT}\n\n`);
  // The gpt-4o models stream when asked (whisper-1 ignores the flag): data-only events, deltas then the done event with usage.
  if (fields.stream === 'true' && fields.model !== 'whisper-1' && !translation) {
    const words = TEXT.split(/(?= )/);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const delta of words) res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
    return res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text: TEXT, usage })}\n\n`);
  }
  // OpenAI's translation object is { text } alone; a transcription's carries its usage.
  const usageOf = translation ? {} : { usage };
  if (format === 'verbose_json') {
    return json(res, 200, { task: translation ? 'translate' : 'transcribe', language: 'english', duration: 3.0, text: TEXT, segments: [{ id: 0, seek: 0, start: 0, end: 3, text: TEXT, tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 }], ...usageOf });
  }
  json(res, 200, { text: TEXT, ...usageOf });
}

function text(res: ServerResponse, type: string, body: string) {
  res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export type FamilyUsage = typeof FAKE_USAGE;

export class FakeFamilies {
  readonly requests: RecordedFamilyRequest[] = [];
  /** What this fake reports: FAKE_USAGE, unless a test sets otherwise. */
  usage: FamilyUsage = structuredClone(FAKE_USAGE);
  private server!: Server;
  private release: (() => void) | undefined;
  private released = Promise.resolve();
  url = '';

  static async start(): Promise<FakeFamilies> {
    const fake = new FakeFamilies();
    fake.server = createServer((req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The next speech answer holds its second chunk until `releaseSpeech()`. */
  holdSpeech(): void {
    this.released = new Promise((resolve) => (this.release = resolve));
  }

  releaseSpeech(): void {
    this.release?.();
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const path = req.url ?? '';
    const record: RecordedFamilyRequest = { path, headers: req.headers, body: {}, files: {} };
    this.requests.push(record);
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('multipart/form-data')) {
      const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(raw) }).formData();
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') {
          const known = record.body[name];
          record.body[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
        } else record.files[name] = { name: value.name, type: value.type, size: value.size };
      }
    } else if (raw.length) record.body = JSON.parse(raw.toString('utf8'));
    if (path === '/v1/embeddings') return embeddings(res, record.body, this.usage);
    if (path === '/v1/moderations') return moderations(res, record.body);
    if (path === '/v1/audio/transcriptions' || path === '/v1/audio/translations') return audioText(res, path, record.body, this.usage);
    if (path === '/v1/audio/speech') {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'transfer-encoding': 'chunked' });
      res.write(SPEECH_CHUNKS[0]);
      await this.released;
      res.write(SPEECH_CHUNKS[1]);
      res.end(SPEECH_CHUNKS[2]);
      return;
    }
    if (path === '/v2/rerank') {
      const documents = record.body.documents as string[];
      const results = documents.map((_, index) => ({ index, relevance_score: 1 / (index + 1) })).slice(0, (record.body.top_n as number | undefined) ?? documents.length);
      return json(res, 200, { id: 'rerank-fake', results, meta: { api_version: { version: '2' }, billed_units: { search_units: this.usage.searchUnits } } });
    }
    json(res, 404, { error: { message: `no route ${path}` } });
  }

  close(): Promise<void> {
    this.release?.();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
