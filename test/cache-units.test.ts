// The response cache's pure parts: the byte-bounded LRU and when it is full, the admission doorkeeper, the canonical key and what makes a request vary, the client's
// Cache-Control, and the check that a captured stream ended whole.
import { describe, expect, it, vi } from 'vitest';
import { Doorkeeper } from '../src/cache/admission.js';
import { clientControl } from '../src/cache/control.js';
import { cacheKey, canonicalBody, RAW_KEY_MAX, samples } from '../src/cache/key.js';
import { ByteBoundedLru, ENTRY_OVERHEAD, heapBytes, keyNumber } from '../src/cache/lru.js';
import { FIRST_BACKOFF_MS, RedisGuard } from '../src/cache/redis-guard.js';
import { replayEvents, streamComplete } from '../src/cache/replay.js';
import { decodeEntry, encodeEntry } from '../src/cache/store.js';
import { cacheLimits } from '../src/config/cache.js';

/** Keeps a text as the store keeps an entry: its heap bytes counted, to its owner. */
const put = (lru: ByteBoundedLru, key: string, text: string, ttlMs: number, owner = '') => lru.set(key, text, ttlMs, heapBytes(text), owner);

describe('the memory store', () => {
  it('drops the least recently used entries once the bytes held pass the bound, and counts them', () => {
    const lru = new ByteBoundedLru(1200);
    const text = 'x'.repeat(200);
    for (const key of ['a', 'b', 'c']) put(lru, key, text, 60_000);
    expect(lru.get('a')).toBe(text);
    put(lru, 'd', text, 60_000);
    put(lru, 'e', text, 60_000);
    expect(lru.bytes).toBeLessThanOrEqual(1200);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(text);
    expect(lru.evictions).toBeGreaterThanOrEqual(1);
  });

  it('keeps nothing larger than the bound, and counts a text past ASCII at two bytes a character', () => {
    const lru = new ByteBoundedLru(1000);
    expect(put(lru, 'big', 'x'.repeat(1000), 60_000)).toBe(false);
    expect(lru.size).toBe(0);
    put(lru, 'wide', '\u4e2d'.repeat(100), 60_000);
    expect(lru.bytes).toBeGreaterThanOrEqual(200);
  });

  it('forgets an entry past its TTL on its own clock, and gives its bytes back', () => {
    let now = 0;
    const lru = new ByteBoundedLru(10_000, () => now);
    put(lru, 'a', 'hello', 1000);
    now = 999;
    expect(lru.get('a')).toBe('hello');
    now = 1000;
    expect(lru.get('a')).toBeUndefined();
    expect(lru.bytes).toBe(0);
  });

  it('holds 100,000 distinct answers in a 64 MiB bound at 64 MiB, evicting the oldest', () => {
    const lru = new ByteBoundedLru(64 * 2 ** 20);
    for (let i = 0; i < 100_000; i++) put(lru, `key-${i}`, JSON.stringify({ i, text: 'lorem ipsum '.repeat(90) }), 60_000);
    expect(lru.bytes).toBeLessThanOrEqual(64 * 2 ** 20);
    expect(lru.size + lru.evictions).toBe(100_000);
    expect(lru.get('key-0')).toBeUndefined();
    expect(lru.get('key-99999')).toBeDefined();
  });

  it('gives the slot of an entry gone to the next one, its recency its own: the oldest still goes first', () => {
    const text = 'x'.repeat(200);
    const size = 2 + 200 + ENTRY_OVERHEAD;
    const lru = new ByteBoundedLru(3 * size);
    for (const key of ['a', 'b', 'c']) put(lru, key, text, 60_000);
    lru.delete('b');
    put(lru, 'd', text, 60_000);
    expect(lru.get('a')).toBe(text);
    put(lru, 'e', text, 60_000);
    expect(lru.get('c')).toBeUndefined();
    put(lru, 'f', text, 60_000);
    expect(lru.get('d')).toBeUndefined();
    expect([lru.get('a'), lru.get('e'), lru.get('f')]).toEqual([text, text, text]);
    expect(lru.size).toBe(3);
    expect(lru.bytes).toBe(3 * size);
  });

  it('grows past the slots it began with and keeps each value under its own key', () => {
    const lru = new ByteBoundedLru(64 * 2 ** 20);
    for (let i = 0; i < 5000; i++) put(lru, `k${i}`, `v${i}`, 60_000);
    for (let i = 0; i < 5000; i += 499) expect(lru.get(`k${i}`)).toBe(`v${i}`);
    expect(lru.size).toBe(5000);
  });

  it('never answers one key with the entry of another of the same number: the later evicts the earlier', () => {
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const key = `key-${i}`;
      const other = seen.get(keyNumber(key));
      if (other !== undefined) pair = [other, key];
      seen.set(keyNumber(key), key);
    }
    const [earlier, later] = pair;
    const lru = new ByteBoundedLru(64 * 2 ** 20);
    put(lru, earlier, 'earlier answer', 60_000);
    expect(lru.get(later)).toBeUndefined();
    expect(lru.delete(later)).toBe(false);
    put(lru, later, 'later answer', 60_000);
    expect([lru.get(earlier), lru.get(later)]).toEqual([undefined, 'later answer']);
    expect([lru.size, lru.evictions, lru.bytes]).toEqual([1, 1, 2 * later.length + heapBytes('later answer') + ENTRY_OVERHEAD]);
  });

  it('finds every entry still held through any order of writes, reads and deletes (its slot table has no tombstones)', () => {
    // A small seeded generator: the same run each time.
    let seed = 12345;
    const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    // 600 keys of one length whose numbers differ in this process (the later of two of one number would evict the earlier).
    const numbers = new Set<number>();
    const keys = Array.from({ length: 600 }, (_, i) => {
      for (let c = 0; ; c++) {
        const key = `k${String(i).padStart(3, '0')}${String.fromCharCode(97 + c)}`;
        if (!numbers.has(keyNumber(key))) return (numbers.add(keyNumber(key)), key);
      }
    });
    const size = 2 * keys[0].length + heapBytes('v') + ENTRY_OVERHEAD;
    const lru = new ByteBoundedLru(300 * size);
    const model = new Map<string, string>();
    for (let step = 0; step < 20_000; step++) {
      const key = keys[random(600)];
      const action = random(10);
      if (action < 6) {
        put(lru, key, 'v', 60_000);
        model.delete(key);
        model.set(key, 'v');
        // The store's bound: its least recently used go first, as the model's oldest insertion or read.
        while (model.size > 300) model.delete(model.keys().next().value!);
      } else if (action < 8) {
        expect(lru.delete(key)).toBe(model.delete(key));
      } else {
        const held = model.get(key);
        expect(lru.get(key)).toBe(held);
        if (held !== undefined) {
          model.delete(key);
          model.set(key, held);
        }
      }
    }
    expect(lru.size).toBe(model.size);
    for (const key of model.keys()) expect(lru.get(key)).toBe('v');
  });

  it("holds each owner to its share: one owner's flood evicts its own oldest, never another's entries", () => {
    const lru = new ByteBoundedLru(10_000, Date.now, 5_000);
    const text = 'x'.repeat(300);
    put(lru, 'quiet-1', text, 60_000, 'quiet');
    put(lru, 'quiet-2', text, 60_000, 'quiet');
    for (let i = 0; i < 100; i++) put(lru, `loud-${i}`, text, 60_000, 'loud');
    expect(lru.get('quiet-1')).toBe(text);
    expect(lru.get('quiet-2')).toBe(text);
    expect(lru.ownerBytes('loud')).toBeLessThanOrEqual(5_000);
    expect(lru.get('loud-99')).toBe(text);
    expect(lru.get('loud-0')).toBeUndefined();
    expect(lru.bytes).toBe(lru.ownerBytes('loud') + lru.ownerBytes('quiet'));
  });

  it("evicts an owner's least recently read entry first, and forgets an owner whose entries are all gone", () => {
    const lru = new ByteBoundedLru(100_000, Date.now, 1_500);
    const text = 'x'.repeat(300);
    for (const key of ['a', 'b', 'c']) put(lru, key, text, 60_000, 'w');
    lru.get('a');
    put(lru, 'd', text, 60_000, 'w');
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(text);
    for (const key of ['a', 'c', 'd']) lru.delete(key);
    expect(lru.ownerBytes('w')).toBe(0);
    expect(lru.bytes).toBe(0);
  });
});

describe('a full store, and the doorkeeper that admits to it', () => {
  it('is full when one more entry of the average size would evict another, from all or from its owner\'s share', () => {
    const text = 'x'.repeat(100);
    const size = 2 + heapBytes(text) + ENTRY_OVERHEAD;
    const lru = new ByteBoundedLru(4 * size + 10, Date.now, 2 * size + 5);
    expect(lru.full('a')).toBe(false);
    put(lru, 'a', text, 60_000, 'one');
    expect(lru.full('one')).toBe(false);
    put(lru, 'b', text, 60_000, 'one');
    // The owner's share (two entries) is full; the store (four) is not, for another owner.
    expect(lru.full('one')).toBe(true);
    expect(lru.full('two')).toBe(false);
    put(lru, 'c', text, 60_000, 'two');
    put(lru, 'd', text, 60_000, 'two');
    expect(lru.full('three')).toBe(true);
    lru.delete('d');
    expect(lru.full('three')).toBe(false);
  });

  it('says a number missed before only once it was seen, and forgets all after an eighth of its bits were set', () => {
    const doorkeeper = new Doorkeeper();
    expect(doorkeeper.seen(12345)).toBe(false);
    expect(doorkeeper.seen(12345)).toBe(true);
    // Numbers are kept by their low 20 bits.
    expect(doorkeeper.seen(12345 + 2 ** 20)).toBe(true);
    expect(doorkeeper.seen(54321)).toBe(false);
    // 12345 and 54321 are two marks; the third through the 131,072nd mark, then all is forgotten.
    for (let n = 0; n < 2 ** 17 - 2; n++) doorkeeper.seen(2 ** 19 + n);
    expect(doorkeeper.seen(12345)).toBe(false);
    expect(doorkeeper.seen(12345)).toBe(true);
  });
});

describe("the guard around Redis's commands", () => {
  const never = () => new Promise<string>(() => undefined);
  const quiet = { warn() {} };

  it('answers undefined past the timeout, every command in flight by one timer', async () => {
    vi.useFakeTimers();
    try {
      const guard = new RedisGuard(50, quiet);
      const pending = [guard.run(never), guard.run(never), guard.run(async () => 'yes')];
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(50);
      expect(await Promise.all(pending)).toEqual([undefined, undefined, 'yes']);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends nothing for a back-off after a failure, then one probe, whose answer closes the circuit', async () => {
    let now = 0;
    const guard = new RedisGuard(50, quiet, () => now);
    let sent = 0;
    const failing = async () => {
      sent++;
      throw new Error('down');
    };
    expect(await guard.run(failing)).toBeUndefined();
    expect(guard.open).toBe(true);
    for (let i = 0; i < 5; i++) expect(await guard.run(failing)).toBeUndefined();
    expect(sent).toBe(1);
    expect(guard.skipped).toBe(5);
    now += FIRST_BACKOFF_MS;
    // The probe fails: the back-off doubles.
    expect(await guard.run(failing)).toBeUndefined();
    expect(sent).toBe(2);
    now += FIRST_BACKOFF_MS;
    expect(await guard.run(failing)).toBeUndefined();
    expect(sent).toBe(2);
    now += FIRST_BACKOFF_MS;
    expect(await guard.run(async () => 'back')).toBe('back');
    expect(guard.open).toBe(false);
    expect(await guard.run(async () => 'again')).toBe('again');
  });

  it('lets only one probe out at a time: the others are skipped while it is in flight', async () => {
    let now = 0;
    const guard = new RedisGuard(50, quiet, () => now);
    await guard.run(async () => Promise.reject(new Error('down')));
    now += FIRST_BACKOFF_MS;
    let release!: (value: string) => void;
    const probe = guard.run(() => new Promise<string>((resolve) => (release = resolve)));
    let sent = 0;
    expect(await guard.run(async () => (sent++, 'x'))).toBeUndefined();
    expect(sent).toBe(0);
    release('ok');
    expect(await probe).toBe('ok');
    expect(await guard.run(async () => 'x')).toBe('x');
  });
});

describe("a workspace's and a key's cache settings together", () => {
  const set = (settings: object) => JSON.stringify(settings);

  it('are nothing when neither narrows the cache, and the narrower of the two otherwise', () => {
    expect(cacheLimits(null, undefined)).toBeUndefined();
    const limits = cacheLimits(set({ enabled: true, ttlSeconds: 600, families: ['chat', 'embeddings'], maxEntryBytes: null }), set({ enabled: true, ttlSeconds: 3600, families: ['embeddings', 'rerank'], maxEntryBytes: 1000 }));
    expect(limits).toEqual({ off: false, ttlSeconds: 600, families: new Set(['embeddings']), maxEntryBytes: 1000 });
  });

  it('are off when either is off, and a key cannot name a family its workspace left out', () => {
    expect(cacheLimits(set({ enabled: false }), set({ enabled: true }))!.off).toBe(true);
    expect(cacheLimits(null, set({ enabled: false }))!.off).toBe(true);
    expect([...cacheLimits(set({ families: [] }), set({ families: ['chat'] }))!.families!]).toEqual([]);
    expect([...cacheLimits(null, set({ families: ['chat'] }))!.families!]).toEqual(['chat']);
  });
});

describe('stored entries', () => {
  const head = { at: 1, model: 'm', channel: 'c', costMicros: 5, currency: 'USD', inputTokens: 3, outputTokens: 2, cachedInputTokens: 0 };

  it('keep the answer text as it went out, line breaks and all, behind a one-line head', () => {
    const sse = 'data: {"a":1}\n\ndata: [DONE]\n\n';
    expect(decodeEntry(encodeEntry({ ...head, sseOptions: 'null', sse }))).toEqual({ ...head, sseOptions: 'null', sse });
    expect(decodeEntry(encodeEntry({ ...head, json: '{"x":"\u00e9"}' }))).toEqual({ ...head, json: '{"x":"\u00e9"}' });
  });

  it('still read in the single-JSON form written before, and a text of neither form is no entry', () => {
    expect(decodeEntry(JSON.stringify({ ...head, json: '{}' }))).toEqual({ ...head, json: '{}' });
    expect(decodeEntry('{"at":1}\n{}')).toBeUndefined();
    expect(decodeEntry(JSON.stringify({ value: 'keyv wrapped', expires: null }))).toBeUndefined();
    expect(decodeEntry('not json')).toBeUndefined();
  });
});

describe('the canonical key', () => {
  it('is the same for members in another order and other whitespace, and leaves the stream flags and user out', () => {
    const a = canonicalBody(JSON.parse('{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":0}'));
    const b = canonicalBody(JSON.parse('{ "temperature": 0, "stream": true, "stream_options": {"include_usage": true}, "user": "u",\n "messages": [ {"content": "hi", "role": "user"} ], "model": "m" }'));
    expect(b!.text).toBe(a!.text);
    expect(canonicalBody({ model: 'm', messages: [], temperature: 0.5 })!.text).not.toBe(a!.text);
  });

  it('tells apart bodies whose values would run together: split strings, a string and a number, null, lone surrogates', () => {
    const text = (body: Record<string, unknown>) => canonicalBody(body)!.text;
    expect(text({ a: ['ab', 'c'] })).not.toBe(text({ a: ['a', 'bc'] }));
    expect(text({ a: 's1:x' })).not.toBe(text({ a: 'x' }));
    expect(text({ a: '1' })).not.toBe(text({ a: 1 }));
    expect(text({ a: null })).not.toBe(text({ a: 'z' }));
    expect(text({ a: true })).not.toBe(text({ a: 't' }));
    expect(text({ ab: 'c' })).not.toBe(text({ a: 'bc' }));
    expect(text({ a: '\ud800' })).not.toBe(text({ a: '\ud801' }));
    expect(text({ a: [1, 2] })).not.toBe(text({ a: [12] }));
    expect(text({ a: 1.0 })).toBe(text({ a: 1 }));
  });

  it('keys the memory store by a short canonical text as it is, and hashes a long one or any for Redis, lone surrogates apart', () => {
    const short = canonicalBody({ model: 'm', input: 'hi' })!.text;
    const raw = cacheKey('ns', 'ws_a', 'relay', short, true);
    expect(raw).toBe(`ws_a\nrelay\n${short}`);
    expect(cacheKey('ns', 'ws_b', 'relay', short, true)).not.toBe(raw);
    // Redis (shared by processes, keys seen by its operators): always the namespace and a hash, and no line break.
    const hashed = cacheKey('ns', 'ws_a', 'relay', short);
    expect(hashed).toMatch(/^ns:[A-Za-z0-9_-]{43}$/);
    const long = canonicalBody({ model: 'm', input: 'x'.repeat(RAW_KEY_MAX) })!.text;
    expect(cacheKey('ns', 'ws_a', 'relay', long, true)).toMatch(/^ns:[A-Za-z0-9_-]{43}$/);
    // UTF-8 has no form for a lone surrogate: each would hash as U+FFFD without the escaped form.
    const lone = (text: string) => cacheKey('ns', 'ws_a', 'relay', canonicalBody({ input: text + 'x'.repeat(RAW_KEY_MAX) })!.text, true);
    expect(new Set([lone('\ud800'), lone('\ud801'), lone('\ufffd')]).size).toBe(3);
    expect(new Set([cacheKey('ns', 'ws_a', 'relay', '\ud800'), cacheKey('ns', 'ws_a', 'relay', '\ud801'), cacheKey('ns', 'ws_a', 'relay', '\ufffd')]).size).toBe(3);
  });

  it('notes tool results, images by URL and server-side conversation state, and refuses a body nested too deep', () => {
    expect(canonicalBody({ messages: [{ role: 'tool', content: 'x' }] })!.toolResults).toBe(true);
    expect(canonicalBody({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] })!.toolResults).toBe(true);
    expect(canonicalBody({ input: [{ type: 'function_call_output', output: 'x' }] })!.toolResults).toBe(true);
    expect(canonicalBody({ messages: [{ content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] })!.imageUrls).toBe(true);
    expect(canonicalBody({ messages: [{ content: [{ type: 'image', source: { type: 'url', url: 'http://example.com/a.png' } }] }] })!.imageUrls).toBe(true);
    expect(canonicalBody({ messages: [{ content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] })!.imageUrls).toBe(false);
    expect(canonicalBody({ input: 'x', previous_response_id: 'resp_1' })!.conversationState).toBe(true);
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(canonicalBody({ messages: deep as unknown[] })).toBeUndefined();
  });

  it('calls a request sampled with a temperature above 0, or none, unless it has a seed', () => {
    expect(samples({})).toBe(true);
    expect(samples({ temperature: 0.2 })).toBe(true);
    expect(samples({ temperature: 0 })).toBe(false);
    expect(samples({ temperature: 1, seed: 7 })).toBe(false);
  });
});

describe("the client's Cache-Control", () => {
  it('reads no-store, no-cache, max-age and x-cache-ttl, ignoring what it does not know', () => {
    expect(clientControl({})).toEqual({ noStore: false, noCache: false });
    expect(clientControl({ 'cache-control': 'No-Store' }).noStore).toBe(true);
    expect(clientControl({ 'cache-control': 'no-cache, max-age=30, foo=bar' })).toEqual({ noStore: false, noCache: true, maxAgeSeconds: 30 });
    expect(clientControl({ 'cache-control': 'max-age=-1' }).maxAgeSeconds).toBeUndefined();
    expect(clientControl({ pragma: 'no-cache' }).noCache).toBe(true);
    expect(clientControl({ pragma: 'no-cache', 'cache-control': 'max-age=5' }).noCache).toBe(false);
    expect(clientControl({ 'x-cache-ttl': '15' }).ttlSeconds).toBe(15);
  });
});

describe('streams', () => {
  it('keeps a stream only when it reached its closing event with no error event', () => {
    expect(streamComplete('openai-chat', 'data: {"a":1}\n\ndata: [DONE]\n\n')).toBe(true);
    expect(streamComplete('openai-chat', 'data: {"a":1}\n\ndata: {"error":{"message":"cut"}}\n\n')).toBe(false);
    expect(streamComplete('anthropic-messages', 'event: message_start\ndata: {}\n\nevent: error\ndata: {}\n\n')).toBe(false);
    expect(streamComplete('anthropic-messages', 'event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n')).toBe(true);
    expect(streamComplete('relay', 'data: [DONE]\n\n')).toBe(false);
  });

  it('replays a chat answer with tool calls as chunks the answer can be rebuilt from', () => {
    const answer = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
    const events = replayEvents('openai-chat', answer, { stream_options: { include_usage: true } }, undefined)!.split('\n\n').filter(Boolean);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(chunks[1].choices[0].delta.tool_calls[0]).toMatchObject({ index: 0, id: 't', function: { name: 'f', arguments: '{}' } });
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: answer.usage });
  });
});
