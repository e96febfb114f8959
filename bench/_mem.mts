import { ResponseStore } from '../src/cache/store.js';
import { cacheKey } from '../src/cache/key.js';
const store = await ResponseStore.open({ store: 'memory', maxBytes: 64 * 1024 * 1024, maxEntryBytes: 1 << 20, maxTtlSeconds: 3600, timeoutMs: 50, sharedAcrossWorkspaces: false, namespace: 'm' }, undefined, console);
global.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const t0 = performance.now();
for (let i = 0; i < 100_000; i++) {
  const answer = JSON.stringify({ id: `chatcmpl-${i}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `answer number ${i}: ` + 'lorem ipsum '.repeat(80) }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 200 } });
  const entry = JSON.stringify({ at: Date.now(), model: 'm', channel: 'c', costMicros: 1, currency: 'USD', inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, json: answer });
  await store.write(cacheKey('m', 'ws', 'openai-chat', `{"q":${i}}`), entry, 3600_000);
  if (i % 5000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
}
const end = process.memoryUsage().rss;
global.gc?.();
const after = process.memoryUsage().rss;
console.log({ usPerWrite: Math.round((performance.now() - t0) * 10) / 1000, heldMiB: (store.memory!.bytes / 2 ** 20).toFixed(1), evictions: store.memory!.evictions, entries: store.memory!.size, peakGrowthMiB: ((Math.max(peak, end) - before) / 2 ** 20).toFixed(0), afterGcGrowthMiB: ((after - before) / 2 ** 20).toFixed(0) });
