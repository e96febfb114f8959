// Blob store on a local directory: writes go to a partial file and are renamed into place only when complete.
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkBlobKey, type BlobInfo, type BlobStore, type ByteRange } from './blob-store.js';

const PARTIAL = '.partial';

export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;

  constructor(readonly root: string) {}

  private path(key: string): string {
    return join(this.root, checkBlobKey(key));
  }

  openBlob(key: string): Promise<Blob> {
    return openAsBlob(this.path(key));
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, _contentType: string): Promise<number> {
    const final = this.path(key);
    const partial = join(this.root, PARTIAL, randomUUID());
    await mkdir(dirname(partial), { recursive: true });
    let bytes = 0;
    try {
      await pipeline(
        body,
        async function* count(source: AsyncIterable<Uint8Array>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(partial, { flags: 'wx' }),
      );
      await mkdir(dirname(final), { recursive: true });
      await rename(partial, final);
      return bytes;
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.path(key);
    const stream = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    // Surface a missing file as a rejection here rather than as a stream error after headers went out.
    await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
    return stream;
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    try {
      const s = await stat(this.path(key));
      return { key, size: s.size, modifiedAt: s.mtimeMs };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async *list(): AsyncIterable<BlobInfo> {
    for (const dir of await readdirOrEmpty(this.root)) {
      if (dir === PARTIAL) continue;
      for (const name of await readdirOrEmpty(join(this.root, dir))) {
        const info = await this.stat(`${dir}/${name}`).catch(() => undefined);
        if (info) yield info;
      }
    }
  }

  async sweepPartial(olderThanMs: number): Promise<number> {
    let removed = 0;
    for (const name of await readdirOrEmpty(join(this.root, PARTIAL))) {
      const path = join(this.root, PARTIAL, name);
      const s = await stat(path).catch(() => undefined);
      if (s && s.mtimeMs < olderThanMs) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}
}

async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}
