// Benchmark: a 25 MiB file uploaded and downloaded through the gateway vs straight into/out of the blob store, with peak RSS growth.
// The HTTP client runs in a child process, so the RSS measured is the gateway's own.
import { spawn } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { blobKeyFor } from '../../src/files/blob-store.js';
import { startFilesGateway } from '../../test/kit/files.js';
import { png } from '../../test/kit/media-samples.js';

export const name = 'files';

const MiB = 1024 * 1024;
const SIZE = 25 * MiB;

/** The client: streams the file as multipart from disk (upload) or reads a signed URL to the end (download); prints its timing. */
const clientScript = `
import http from 'node:http';
import fs from 'node:fs';
const { MODE, URL_, KEY, FILE, SIZE } = process.env;
const done = (res, extra) => { let body = ''; let n = 0; res.on('data', (d) => { n += d.length; if (MODE === 'upload') body += d; }); res.on('end', () => process.stdout.write(JSON.stringify({ ms: performance.now() - t0, status: res.statusCode, bytes: MODE === 'upload' ? JSON.parse(body).bytes : n }))); };
const t0 = performance.now();
if (MODE === 'upload') {
  const boundary = '----benchboundary';
  const pre = Buffer.from('--' + boundary + '\\r\\nContent-Disposition: form-data; name="purpose"\\r\\n\\r\\nvision\\r\\n--' + boundary + '\\r\\nContent-Disposition: form-data; name="file"; filename="sample.png"\\r\\nContent-Type: image/png\\r\\n\\r\\n');
  const post = Buffer.from('\\r\\n--' + boundary + '--\\r\\n');
  const req = http.request(URL_ + '/v1/files', { method: 'POST', headers: { authorization: 'Bearer ' + KEY, 'content-type': 'multipart/form-data; boundary=' + boundary, 'content-length': pre.length + Number(SIZE) + post.length } }, done);
  req.write(pre);
  const file = fs.createReadStream(FILE);
  file.pipe(req, { end: false });
  file.on('end', () => req.end(post));
} else {
  http.get(URL_, done);
}
`;

function runClient(env: Record<string, string>): Promise<{ ms: number; status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', clientScript], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited ${code}`))));
  });
}

/** A 25 MiB file that sniffs as PNG, written in 1 MiB pieces so the bench never holds it whole. */
function writeSample(dir: string): string {
  const path = join(dir, 'sample.png');
  const fd = openSync(path, 'w');
  const head = png();
  writeSync(fd, head);
  const block = Buffer.alloc(MiB, 0x61);
  for (let left = SIZE - head.length; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(block.length, left));
  closeSync(fd);
  return path;
}

/** A full collection before each measurement, so garbage from the previous step is not counted as growth. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Runs fn while sampling this process's RSS; returns its result and how far RSS rose above where it started. */
async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number; rssGrowthMiB: number }> {
  collectGarbage();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  const start = performance.now();
  try {
    const result = await fn();
    return { result, ms: performance.now() - start, rssGrowthMiB: (Math.max(peak, process.memoryUsage.rss()) - baseline) / MiB };
  } finally {
    clearInterval(timer);
  }
}

async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of body) n += chunk.length;
  return n;
}

export async function run(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-files-'));
  const gw = await startFilesGateway('local', { listen: true });
  try {
    const sample = writeSample(dir);
    const upload = () => runClient({ MODE: 'upload', URL_: gw.url, KEY: gw.key, FILE: sample, SIZE: String(SIZE) });
    await upload(); // warm-up

    const directKey = blobKeyFor(gw.workspace.id, 'file_direct');
    const directUp = await measure(() => gw.services.blobs.put(directKey, createReadStream(sample), 'image/png'));
    const gatewayUp = await measure(upload);
    if (gatewayUp.result.status !== 200 || gatewayUp.result.bytes !== SIZE) throw new Error(`upload failed: ${JSON.stringify(gatewayUp.result)}`);
    const directDown = await measure(async () => drain(await gw.services.blobs.get(directKey)));
    const files = await gw.app.inject({ method: 'GET', url: '/v1/files?limit=1', headers: { authorization: `Bearer ${gw.key}` } });
    const gatewayDown = await measure(() => runClient({ MODE: 'download', URL_: files.json().data[0].url.replace(/^https?:\/\/[^/]+/, gw.url) }));
    if (gatewayDown.result.status !== 200 || gatewayDown.result.bytes !== SIZE) throw new Error(`download failed: ${JSON.stringify(gatewayDown.result)}`);

    const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
    return {
      'file MiB': SIZE / MiB,
      'blob store': gw.services.blobs.kind,
      'upload direct ms': round(directUp.ms, 1),
      'upload gateway ms (client-side)': round(gatewayUp.result.ms, 1),
      'upload gateway/direct throughput': round(directUp.ms / gatewayUp.result.ms),
      'upload gateway peak RSS growth MiB': round(gatewayUp.rssGrowthMiB, 1),
      'download direct ms': round(directDown.ms, 1),
      'download gateway ms (client-side)': round(gatewayDown.result.ms, 1),
      'download gateway/direct throughput': round(directDown.ms / gatewayDown.result.ms),
      'download gateway peak RSS growth MiB': round(gatewayDown.rssGrowthMiB, 1),
    };
  } finally {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().then((figures) => console.log(figures));
}
