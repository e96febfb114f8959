// Families billed in units of their own, added by files alone (a catalogue entry, a request schema, a protocol operation
// and a channel; no TypeScript): an OCR family billed per page from `usage_info.pages_processed` (Mistral's POST /v1/ocr)
// and a family billed per image sent. Each is billed, capped (a key capped at exactly N calls admits N, then 402, though
// each call's usage passes its reservation) and logged; check-config refuses a unit priced but never read, read but
// never priced, or reserved by a limit the model does not declare.
import { createServer, type Server } from 'node:http';
import { readdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { json } from './kit/fake-http.js';
import { startGateway, testDatabase, type TestGateway } from './kit/gateway.js';

/** The operator's files, as docs/endpoints.md writes them ("A family billed in a unit of its own"). */
export const unitFamilies = {
  catalogue: `- name: ocr
  modelKind: ocr
  method: [POST]
  path: /v1/ocr
  scope: llm.ocr
  requestSchema: requests/ocr
  bodyLimit: 1048576
  handler: pipeline
  pipeline: { dialect: relay, operation: ocr }

- name: image-tags
  modelKind: image-tagging
  method: [POST]
  path: /v1/images/tags
  scope: llm.tags
  requestSchema: requests/image-tags
  bodyLimit: 1048576
  handler: pipeline
  pipeline: { dialect: relay, operation: tags }
`,
  ocrSchema: JSON.stringify({
    $id: 'requests/ocr',
    type: 'object',
    required: ['model', 'document'],
    properties: { model: { type: 'string', minLength: 1 }, document: { type: 'object', required: ['type'], properties: { type: { enum: ['document_url', 'image_url'] } } }, pages: { type: 'array', items: { type: 'integer' } } },
  }),
  tagsSchema: JSON.stringify({
    $id: 'requests/image-tags',
    type: 'object',
    required: ['model', 'images'],
    properties: { model: { type: 'string', minLength: 1 }, images: { type: 'array', minItems: 1, maxItems: 16, items: { type: 'string', minLength: 1 } } },
  }),
  protocol: `id: vision-units
dialect: relay
auth: { header: authorization, value: "Bearer {{ credential }}" }
operations:
  ocr:
    path: /ocr
    usage:
      from: "{{ answer.usage_info }}"
      tokens: { inputTokens: null, outputTokens: null, pages: "{{ usage.pages_processed }}" }
  tags:
    path: /tags
    usage:
      from: "{{ answer.usage }}"
      tokens: { inputTokens: null, outputTokens: null, images: "{{ usage.images }}" }
`,
  /** $1 per 1,000 pages, 4 reserved a call, at most the model's media.maxPages; $0.002 an image, reserved per image sent, at most 16 frames. */
  channel: (baseUrl: string) => `id: vision
protocol: vision-units
baseUrl: ${baseUrl}
models:
  - id: ocr-latest
    upstream: mistral-ocr-latest
    kind: ocr
    media: { maxPages: 1000 }
    price: { units: { pages: { each: 0.001, reserve: 4, most: { limit: maxPages } } } }
  - id: tagger
    kind: image-tagging
    media: { maxFrames: 16 }
    price: { units: { images: { each: 0.002, reserve: { countOf: images }, most: { limit: maxFrames } } } }
`,
};

/** What the fake reports next: pages an OCR call processed, images a tagging call counted (a GIF's frames count apiece). */
const usage = { pages: 3, images: 2 };
let upstream: Server;
let gw: TestGateway;

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    // Mistral's OCR answer (docs.mistral.ai, POST /v1/ocr): pages, the model, usage_info.
    if (req.url === '/v1/ocr') return json(res, 200, { pages: [{ index: 0, markdown: '# Invoice', images: [], dimensions: null }], model: body.model, usage_info: { pages_processed: usage.pages, doc_size_bytes: 2048 } });
    json(res, 200, { model: body.model, tags: body.images.map(() => ['cat']), usage: { images: usage.images } });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gw = await startGateway({
    // Settlements wait 250 ms to commit together: long enough that an answer sent before its commit is seen to be.
    extraConfig: 'endpoints:\n  catalogueDir: ./catalogue\n  schemasDir: ./schemas\nbilling:\n  settleBatchMs: 250\n',
    files: { 'catalogue/vision.yaml': unitFamilies.catalogue, 'schemas/ocr.json': unitFamilies.ocrSchema, 'schemas/image-tags.json': unitFamilies.tagsSchema },
    protocols: { 'vision-units.yaml': unitFamilies.protocol },
    channels: { vision: unitFamilies.channel(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`) },
  });
});
afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
});

const ocr = (key: string) => gw.app.inject({ method: 'POST', url: '/v1/ocr', headers: { authorization: `Bearer ${key}` }, payload: { model: 'ocr-latest', document: { type: 'document_url', document_url: 'https://example.com/invoice.pdf' } } });
const tags = (key: string, images = ['data:image/gif;base64,R0lGOD']) => gw.app.inject({ method: 'POST', url: '/v1/images/tags', headers: { authorization: `Bearer ${key}` }, payload: { model: 'tagger', images } });

/** The request's log row, once the settlement batch has written it. */
async function logRow(requestId: string) {
  return vi.waitFor(
    async () => {
      const row = await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).executeTakeFirst();
      if (!row) throw new Error(`no log row yet for ${requestId}`);
      return row;
    },
    { timeout: 5_000, interval: 20 },
  );
}

/**
 * The ledger rows of a request as a second connection to the SQLite file sees them (what is committed), as another
 * worker process would; on PostgreSQL, whose store commits each settlement before its answer, the gateway's own.
 */
function committedLedger(requestId: string): Promise<unknown[]> | unknown[] {
  if (testDatabase === 'postgres') return ledgerForRequest(gw.services.db, requestId);
  const dataDir = join(gw.dir, 'data');
  const file = readdirSync(dataDir).find((name) => name.endsWith('.db') || name.endsWith('.sqlite'));
  const other = new Database(join(dataDir, file!), { readonly: true });
  try {
    return other.prepare('select cost_micros, overage_micros from usage_ledger where request_id = ?').all(requestId);
  } finally {
    other.close();
  }
}

/** Calls until refused: the statuses, in order. */
async function untilRefused(call: () => ReturnType<typeof ocr>): Promise<number[]> {
  const statuses: number[] = [];
  while (statuses.at(-1) !== 402 && statuses.length < 10) statuses.push((await call()).statusCode);
  return statuses;
}

describe('a family billed per page (OCR, by files alone)', () => {
  it('bills the pages the answer reports at $0.001 each, on the ledger and in the request log', async () => {
    usage.pages = 3;
    const res = await ocr(gw.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model: 'ocr-latest', usage_info: { pages_processed: 3 }, cost: { amount: 0.003, currency: 'USD' } });
    const id = res.headers['x-request-id'] as string;
    expect(await logRow(id)).toMatchObject({ status: 200, route: 'ocr', model: 'ocr-latest', cost_micros: 3000 });
    expect(await ledgerForRequest(gw.services.db, id)).toEqual([expect.objectContaining({ cost_micros: 3000, overage_micros: 0, units: 3 })]);
  });

  it('gives a key capped at exactly 3 calls 3, then 402, though each call used more pages than it reserved', async () => {
    // 10 pages a call ($0.010), 4 reserved ($0.004): an overage the answer waits for, so the 4th call sees a spent cap.
    usage.pages = 10;
    const key = await gw.newKey({ spendCapMicros: 3 * 10_000 });
    expect(await untilRefused(() => ocr(key))).toEqual([200, 200, 200, 402]);
  });

  it('books a charge above its reservation before the answer goes out (another worker reading the ledger sees it)', async () => {
    usage.pages = 10;
    const res = await ocr(gw.key);
    expect(res.statusCode).toBe(200);
    // Read at once, as another worker or replica would: the overage row is committed already.
    expect(await committedLedger(res.headers['x-request-id'] as string)).toEqual([expect.objectContaining({ cost_micros: 10_000, overage_micros: 6_000 })]);
  });

  it('charges the reservation, no overage, for more pages than the model can process (502, logged)', async () => {
    usage.pages = 5000;
    const res = await ocr(gw.key);
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    const id = res.headers['x-request-id'] as string;
    expect(await ledgerForRequest(gw.services.db, id)).toEqual([expect.objectContaining({ cost_micros: 4000, overage_micros: 0 })]);
    expect(await logRow(id)).toMatchObject({ status: 502, error_code: 'upstream_malformed', cost_micros: 4000 });
  });
});

describe('a family billed per image sent (by files alone)', () => {
  it('reserves per image sent and bills the images the answer reports at $0.002 each', async () => {
    usage.images = 2;
    const res = await tags(gw.key, ['a.png', 'b.png']);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().cost).toEqual({ amount: 0.004, currency: 'USD' });
    const id = res.headers['x-request-id'] as string;
    expect(await logRow(id)).toMatchObject({ status: 200, route: 'image-tags', model: 'tagger', cost_micros: 4000 });
  });

  it('gives a key capped at exactly 3 calls 3, then 402, though each GIF counted 3 frames against 1 reserved', async () => {
    usage.images = 3;
    const key = await gw.newKey({ spendCapMicros: 3 * 6_000 });
    expect(await untilRefused(() => tags(key))).toEqual([200, 200, 200, 402]);
  });

  it('refuses a first call whose images alone pass the cap, before it reaches the vendor (a reservation of 0 would let it through)', async () => {
    const key = await gw.newKey({ spendCapMicros: 5_000 });
    expect((await tags(key, ['1', '2', '3'])).statusCode).toBe(402);
  });

  it('charges the reservation for more images than the model takes (502, no overage)', async () => {
    usage.images = 100;
    const res = await tags(gw.key, ['a.png']);
    expect(res.statusCode).toBe(502);
    expect(await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string)).toEqual([expect.objectContaining({ cost_micros: 2000, overage_micros: 0 })]);
  });
});

describe('check-config on units', () => {
  /** The problems of the gateway's folder once `channel` is written beside the others (the running gateway read its files at start). */
  async function problemsWith(channel: string): Promise<string[]> {
    writeFileSync(join(gw.dir, 'channels', 'units-broken.yaml'), channel);
    return loadConfig(join(gw.dir, 'config.yaml'), { env: { DATABASE_URL: process.env.DATABASE_URL } }).then(
      () => [],
      (err: ConfigError) => err.problems,
    );
  }
  const model = (price: string, extra = '') => `id: broken\nprotocol: vision-units\nbaseUrl: http://127.0.0.1:9/v1\nmodels:\n  - id: broken-ocr\n    kind: ocr\n${extra}    price: ${price}\n`;

  it('refuses a model on an operation whose usage reads a unit it does not price (a silent $0 a call)', async () => {
    expect(await problemsWith(model('{ perRequest: 0 }'))).toEqual([
      expect.stringMatching(/channels\/units-broken\.yaml:7:12 \/models\/0\/price operation "ocr" of protocol "vision-units" \(.*vision-units\.yaml:\d+:\d+\) for endpoint "ocr" read unit "pages" in the usage mapping, which model "broken-ocr" does not price/),
    ]);
  });

  it('refuses a unit priced that the operation never reads, and a reservation by a limit the model does not declare', async () => {
    expect(await problemsWith(model('{ units: { pages: { free: true }, sheets: { each: 0.01, reserve: { limit: maxSheets } } } }'))).toEqual([
      expect.stringMatching(/units-broken\.yaml:\d+:\d+ \/models\/0\/price\/units\/sheets\/reserve model "broken-ocr" declares no "maxSheets"/),
      expect.stringMatching(/units-broken\.yaml:\d+:\d+ \/models\/0\/price\/units\/sheets model "broken-ocr" is priced by "sheets", which operation "ocr" .* neither reads in its usage mapping nor measures/),
    ]);
  });

  it('refuses a priced unit with no reservation (schema) and one with two rates', async () => {
    const problems = await problemsWith(model('{ units: { pages: { each: 0.001 } } }'));
    expect(problems).toEqual([expect.stringMatching(/units-broken\.yaml:\d+:\d+ \/models\/0\/price\/units\/pages .*reserve/)]);
    expect(await problemsWith(model('{ units: { pages: { each: 0.001, perThousand: 1, reserve: 4 } } }'))).toEqual([expect.stringMatching(/\/models\/0\/price\/units\/pages unit "pages" of model "broken-ocr" needs exactly one of each, perThousand, perMillion or free \(it has each, perThousand\)/)]);
  });
});
