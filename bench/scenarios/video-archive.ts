// Benchmark: a 512 MiB video result archived by the task runner (download operation -> file store), with the gateway's
// peak RSS growth while it streams. The upstream runs in a child process, so the RSS measured is the gateway's own.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startGateway } from '../../test/kit/gateway.js';
import { openaiVideoChannel } from '../../test/kit/tasks.js';

export const name = 'video-archive';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_VIDEO_MIB ?? 512) * MiB;

/** OpenAI's video API, answering completed at once and streaming SIZE bytes of MP4 (an ftyp box, then filler) with backpressure. */
const upstreamScript = `
import http from 'node:http';
const SIZE = Number(process.env.SIZE);
const header = Buffer.alloc(32); header.writeUInt32BE(32, 0); header.write('ftyp', 4, 'ascii'); header.write('isom', 8, 'ascii'); header.write('isommp42', 16, 'ascii');
const chunk = Buffer.alloc(256 * 1024);
const server = http.createServer((req, res) => {
  const json = (body) => { const text = JSON.stringify(body); res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text); };
  req.resume();
  if (req.method === 'POST') return req.on('end', () => json({ id: 'video_bench', object: 'video', status: 'queued', progress: 0 }));
  if (req.url.endsWith('/content')) {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': SIZE });
    let sent = 0;
    const pump = () => {
      while (sent < SIZE) {
        const piece = sent === 0 ? header : chunk.subarray(0, Math.min(chunk.length, SIZE - sent));
        sent += piece.length;
        if (!res.write(piece)) return res.once('drain', pump);
      }
      res.end();
    };
    return pump();
  }
  json({ id: 'video_bench', object: 'video', status: 'completed', progress: 100, seconds: '4' });
});
server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;

function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export async function run(): Promise<Record<string, number | string>> {
  const upstream: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', upstreamScript], { env: { ...process.env, SIZE: String(SIZE) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [url] = (await once(createInterface({ input: upstream.stdout! }), 'line')) as [string];
  const gw = await startGateway({
    channels: { video: openaiVideoChannel(url) },
    extraConfig: 'tasks:\n  tickMilliseconds: 10\n  poll: { firstSeconds: 0.01, maxSeconds: 0.05 }\n',
  });
  try {
    const headers = { authorization: `Bearer ${gw.key}` };
    collectGarbage();
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
    const start = performance.now();
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/videos', headers, payload: { model: 'sora-2', prompt: 'bench', seconds: 4 } });
    const id = created.json().id as string;
    let task: Record<string, any> = {};
    while (task.status !== 'completed' && task.status !== 'failed') {
      await new Promise((r) => setTimeout(r, 20));
      task = (await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}`, headers })).json();
    }
    const ms = performance.now() - start;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    if (task.archive_status !== 'archived') throw new Error(`archive failed: ${JSON.stringify(task).slice(0, 300)}`);
    const file = await gw.services.db.selectFrom('files').selectAll().where('id', '=', task.file_id).executeTakeFirstOrThrow();
    if (Number(file.bytes) !== SIZE) throw new Error(`archived ${file.bytes} bytes, not ${SIZE}`);
    const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
    return {
      'result MiB': SIZE / MiB,
      'blob store': gw.services.blobs.kind,
      'create to completed ms': round(ms),
      'archive throughput MiB/s': round(SIZE / MiB / (ms / 1000)),
      'gateway peak RSS growth MiB': round((peak - baseline) / MiB),
      'target MiB': '< 64',
    };
  } finally {
    await gw.close();
    upstream.kill();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().then((figures) => console.log(figures));
}
