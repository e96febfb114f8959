// Issue 37 item 1: counting tokens locally (POST /v1/messages/count_tokens on a channel without a count endpoint) is
// bounded per request: a long word no longer costs the square of its length on the event loop, and while a large body
// is counted, /healthz and another key's calls are served.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { countMessagesTokens, textPieces, MAX_RUN } from '../src/engine/count-tokens.js';

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }) }, listen: true });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

/** CJK characters from a fixed pseudo-random sequence: one word (no spaces) that no cache of the tokenizer has seen, its slowest kind of text. */
function randomCjk(length: number, seed = 7): string {
  const out = new Uint16Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = 0x4e00 + ((x >>> 8) % 20000);
  }
  return Buffer.from(out.buffer).toString('utf16le');
}

const count = async (text: string, key = gw.key) => {
  const started = performance.now();
  const res = await fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: text }] }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, header: res.headers.get('x-token-count'), body: (await res.json()) as { input_tokens: number }, ms: performance.now() - started };
};

/** Times sequential GETs of /healthz until `until` settles: the slowest one. */
async function slowestHealthCheck(until: Promise<unknown>): Promise<{ slowestMs: number; checks: number }> {
  let done = false;
  void until.finally(() => (done = true));
  let slowestMs = 0;
  let checks = 0;
  while (!done) {
    const started = performance.now();
    const res = await fetch(`${gw.url}/healthz`);
    await res.arrayBuffer();
    slowestMs = Math.max(slowestMs, performance.now() - started);
    checks++;
  }
  return { slowestMs, checks };
}

describe('POST /v1/messages/count_tokens counted locally, bounded per request', () => {
  it('answers a 128 KiB one-letter word in seconds, not the quarter of a minute it took', { timeout: 60_000 }, async () => {
    const res = await count('a'.repeat(128 * 1024));
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(5000);
    // 3 per request + 4 per message, plus each piece of the word.
    expect(res.body.input_tokens).toBe(3 + 4 + (128 * 1024 * countTokens('a'.repeat(MAX_RUN))) / MAX_RUN);
  });

  it('answers 6 MiB of one random CJK word (its slowest text) in seconds, while /healthz and another key stay fast', { timeout: 60_000 }, async () => {
    const other = await gw.newKey();
    const chars = 2 * 1024 * 1024;
    const counting = count(randomCjk(chars));
    const health = await slowestHealthCheck(counting);
    // Another key's call, answered while the count runs (or right after it, when the count is already done).
    const otherCall = await count('Hello there', other);
    const res = await counting;
    expect(res.status).toBe(200);
    expect(res.header).toMatch(/^approximate; encoding=o200k_base/);
    expect(res.ms).toBeLessThan(5000);
    // Rare CJK characters run at one to three tokens each: a count of that order, not a guess of nothing.
    expect(res.body.input_tokens).toBeGreaterThan(chars);
    expect(res.body.input_tokens).toBeLessThan(4 * chars);
    expect(otherCall).toMatchObject({ status: 200, body: { input_tokens: 3 + 4 + countTokens('Hello there') } });
    // The event loop was free between slices of counting: every health check answered in a part of the count's time (the
    // slowest waits while the 6 MiB body is read and parsed, before any counting; it used to wait for the whole count).
    expect(health.checks).toBeGreaterThan(2);
    expect(health.slowestMs).toBeLessThan(res.ms / 2);
  });

  it('extrapolates the rest of a text at the rate counted so far once the counting budget is spent', async () => {
    const text = randomCjk(1024 * 1024);
    // The whole count has no budget: on a loaded machine 1 MiB of CJK can take more than the default second of counting.
    const whole = await countMessagesTokens({ messages: [{ role: 'user', content: text }] }, 'o200k_base', { budgetMs: Number.POSITIVE_INFINITY });
    const part = await countMessagesTokens({ messages: [{ role: 'user', content: text }] }, 'o200k_base', { budgetMs: 1 });
    expect(whole.extrapolated).toBe(false);
    expect(part.extrapolated).toBe(true);
    expect(part.tokens).toBeGreaterThan(whole.tokens * 0.8);
    expect(part.tokens).toBeLessThan(whole.tokens * 1.2);
  });

  it('counts a special-token spelling in client text as text, not a 500', async () => {
    const res = await count('say <|endoftext|> now');
    expect(res.status).toBe(200);
    expect(res.body.input_tokens).toBe(3 + 4 + countTokens('say <|endoftext|> now', { disallowedSpecial: new Set() }));
  });

  it('cuts ordinary text before the space of a word, counting it as whole, and a long word never inside a surrogate pair', () => {
    const words = 'The quick brown fox jumps over the lazy dog. '.repeat(100);
    const cut = [...textPieces(words)];
    expect(cut.length).toBeGreaterThan(10);
    expect(cut.join('')).toBe(words);
    for (const piece of cut.slice(1)) expect(piece).toMatch(/^ \S/);
    expect(cut.reduce((sum, piece) => sum + countTokens(piece), 0)).toBe(countTokens(words));
    const emoji = '😀'.repeat(300);
    const pieces = [...textPieces(emoji)];
    expect(pieces.join('')).toBe(emoji);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(MAX_RUN + 1);
    for (const piece of pieces) expect(piece.charCodeAt(piece.length - 1) >= 0xd800 && piece.charCodeAt(piece.length - 1) <= 0xdbff).toBe(false);
  });
});
