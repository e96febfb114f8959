// Uploads over a real socket: an over-limit upload is answered 413, and a client that aborts midway leaves no bytes and no row.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/files/blob-store.js';
import { blobDrivers, blobKeys, fileRowCount, startFilesGateway, uploadForm, type FilesGateway } from './kit/files.js';
import { png } from './kit/media-samples.js';

const MiB = 1024 * 1024;

describe.each(blobDrivers)('streamed uploads on %s blobs', (driver) => {
  let gw: FilesGateway;

  beforeAll(async () => {
    gw = await startFilesGateway(driver, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers 413 to a client sending 25 MiB and one byte', async () => {
    const form = uploadForm(png(25 * MiB + 1), 'big.png');
    const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, body: new Uint8Array(form.payload) });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('file_too_large');
    expect(await fileRowCount(gw)).toBe(0);
    expect(await blobKeys(gw)).toEqual([]);
  });

  it('leaves no bytes and no row when the client aborts mid-upload', async () => {
    const blobs = gw.services.blobs as BlobStore & { put: BlobStore['put'] };
    const put = blobs.put;
    let reached!: () => void;
    const reachedBytes = new Promise<void>((resolve) => (reached = resolve));
    let settled!: Promise<unknown>;
    // Watch the stream the store consumes: past 6 MiB the S3 store has sent a whole part, so its abort path runs too.
    blobs.put = (key, body, type) => {
      const watched = (async function* () {
        let n = 0;
        for await (const chunk of body) {
          n += chunk.length;
          if (n >= 6 * MiB) reached();
          yield chunk;
        }
      })();
      const result = put.call(blobs, key, watched, type);
      settled = result.catch((err: unknown) => err);
      return result;
    };
    try {
      const form = uploadForm(png(20 * MiB), 'aborted.png');
      const { port } = new URL(gw.url);
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      const head = `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${gw.key}\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.payload.length}\r\n\r\n`;
      socket.write(head);
      socket.write(form.payload.subarray(0, 12 * MiB));
      await reachedBytes;
      socket.destroy();
      expect(await settled).toBeInstanceOf(Error);
    } finally {
      blobs.put = put;
    }
    expect(await fileRowCount(gw)).toBe(0);
    expect(await blobKeys(gw)).toEqual([]);
    expect(await gw.services.blobs.sweepPartial(Date.now() + 60_000)).toBe(0);
  });
});
