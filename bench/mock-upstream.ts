// A minimal openai-chat upstream for benchmarks: fixed answers, no parsing beyond what streaming needs. Prints its URL.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1700000000,
  model: 'bench-upstream',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Benchmark answer with a few words in it.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
});
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-upstream', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model: 'bench-upstream', choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } })}\n\n`;
/** Delay between stream chunks; long streams keep connections open for the memory-per-stream figure. */
const chunkDelayMs = Number(process.env.CHUNK_DELAY_MS ?? 0);
/** Delay before a JSON answer: an upstream that takes this long to answer (the capacity figure uses 20 ms). */
const answerDelayMs = Number(process.env.MOCK_DELAY_MS ?? 0);

/** Streams open right now and the most open at once (GET /stats): shows whether a relay queues streams behind a pool. */
let openStreams = 0;
let mostOpenStreams = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.end(JSON.stringify({ openStreams, mostOpenStreams }));
    mostOpenStreams = openStreams;
    return;
  }
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(parts).toString();
    if (!body.includes('"stream":true')) {
      if (answerDelayMs) await new Promise((r) => setTimeout(r, answerDelayMs));
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    mostOpenStreams = Math.max(mostOpenStreams, ++openStreams);
    res.once('close', () => openStreams--);
    res.write(chunk({ role: 'assistant', content: 'Bench' }));
    for (const word of [' answer', ' with', ' a', ' few', ' words.']) {
      if (chunkDelayMs) await new Promise((r) => setTimeout(r, chunkDelayMs));
      if (res.destroyed) return;
      res.write(chunk({ content: word }));
    }
    res.write(chunk({}, 'stop'));
    if (body.includes('"include_usage":true')) res.write(usageChunk);
    res.end('data: [DONE]\n\n');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`MOCK_URL=http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
