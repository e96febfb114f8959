// Uploads that cannot hold a connection (issue 45, items 3 and 4): a declared Content-Length over the route's limit is
// 413 before the body is read; a refused upload's connection is closed, so the openai SDK (undici keep-alive) uploads
// again on it and is answered; stalled and trickling bodies are cut by the rate floor and slow headers by Node's
// headersTimeout, all on a short configured server.timeouts, while another key is served.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeFamilies } from './kit/fake-families.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';

/** The audio routes' form budget (catalogue/audio.yaml, 25 MiB), under their declared limit (26 MiB) and files.maxUploadBytes + 1. */
const FORM_BUDGET = 25 * 1024 * 1024;
let fake: FakeFamilies;
let gw: TestGateway;
let port: number;

beforeAll(async () => {
  fake = await FakeFamilies.start();
  gw = await startGateway({
    channels: { openai: readFileSync(join(repoRoot, 'channels', 'openai.yaml'), 'utf8').replace(/^baseUrl: .*$/m, `baseUrl: ${fake.url}/v1`) },
    env: { OPENAI_API_KEY: 'sk-openai-test' },
    listen: true,
    // headersMs counts from a connection's opening: the SDK, in this process, opens one and then spends a second or so
    // encoding a 25 MiB form before its first byte, so it is not shorter than that.
    serverConfig: '  timeouts: { headersMs: 2500, requestMs: 60000, minBodyBytesPerSecond: 2048, bodyGraceMs: 300, checkIntervalMs: 50 }\n',
  });
  port = Number(new URL(gw.url).port);
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

/** A raw connection to the gateway: everything it received once the gateway closed it. */
function rawClient(): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))));
  return { socket, closed };
}

const uploadHead = (length: number, key = gw.key) =>
  `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${length}\r\n\r\n`;

describe('a body over its limit', () => {
  it('is refused with 413 on its declared Content-Length before a byte of it is sent, and its connection closed', async () => {
    for (const [path, type] of [
      ['/v1/files', 'multipart/form-data; boundary=b'],
      ['/v1/chat/completions', 'application/json'],
    ]) {
      const { socket, closed } = rawClient();
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: ${type}\r\nContent-Length: 1073741824\r\n\r\n`);
      const answer = await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(answer).toContain('"code":"body_too_large"');
    }
  });

  it('closes a refused upload: the openai SDK, on one keep-alive connection, uploads again after a 413 and is answered', async () => {
    const dispatcher = new Agent({ connections: 1 });
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0, fetchOptions: { dispatcher } as never });
    const audio = (bytes: Buffer) => toFile(bytes, 'meeting.mp3', { type: 'audio/mpeg' });
    try {
      // Within the route's declared limit, over the form's budget: its counter refuses it with the rest of the body unread
      // (before, the next request on the connection waited behind those bytes for keepAliveTimeout, 72 s).
      await expect(client.audio.transcriptions.create({ model: 'whisper-1', file: await audio(Buffer.alloc(FORM_BUDGET + 512 * 1024, 1)) })).rejects.toMatchObject({ status: 413 });
      const answer = await client.audio.transcriptions.create({ model: 'whisper-1', file: await audio(Buffer.from('ID3 fake mp3 bytes')) });
      expect(answer.text).toBe('Hello from the fake audio.');
    } finally {
      await dispatcher.close();
    }
  });
});

describe('slow clients', () => {
  it('cuts 60 stalled and trickling uploads while another key is served', async () => {
    const other = await gw.newKey();
    const clients = Array.from({ length: 60 }, (_, i) => {
      const client = rawClient();
      client.socket.write(uploadHead(100_000));
      // Half send nothing more; half a byte every 50 ms (20 bytes a second, under the 2048 floor).
      const trickle = i % 2 ? setInterval(() => client.socket.writable && client.socket.write('-'), 50) : undefined;
      void client.closed.then(() => clearInterval(trickle));
      return client;
    });
    const client = new OpenAI({ apiKey: other, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const served = await client.files.create({ file: await toFile(png(3000), 'meanwhile.png', { type: 'image/png' }), purpose: 'vision' });
    expect(served).toMatchObject({ object: 'file', bytes: 3000 });
    const answers = await Promise.all(clients.map((c) => c.closed));
    // Cut without an answer: each handler was reading its form.
    expect(answers.filter((a) => a !== '')).toEqual([]);
  });

  it('answers 408 and closes a connection whose headers do not arrive within headersMs', async () => {
    const { socket, closed } = rawClient();
    socket.write('POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X'), 50);
    const answer = await closed;
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"request_timeout"');
  });
});
