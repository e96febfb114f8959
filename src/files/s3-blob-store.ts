// Blob store on S3-compatible storage (MinIO, S3, R2) through the minio client, streamed in bounded parts.
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import type { GatewayConfig } from '../config/types.js';
import { checkBlobKey, type BlobInfo, type BlobStore, type ByteRange } from './blob-store.js';

/** S3's smallest part (all but the last). The client's own putObject would buffer an unsized stream whole. */
const PART_BYTES = 5 * 1024 * 1024;

type S3Settings = GatewayConfig['storage']['blobs'];

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly client: Client;
  readonly bucket: string;
  private bucketReady?: Promise<void>;

  constructor(settings: S3Settings) {
    if (!settings.endpoint || !settings.bucket) throw new Error('storage.blobs: driver s3 needs endpoint and bucket');
    const url = new URL(/^[a-z]+:\/\//i.test(settings.endpoint) ? settings.endpoint : `${settings.useSSL === false ? 'http' : 'https'}://${settings.endpoint}`);
    const useSSL = settings.useSSL ?? url.protocol === 'https:';
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      useSSL,
      accessKey: settings.accessKey,
      secretKey: settings.secretKey,
      region: settings.region,
      pathStyle: settings.pathStyle ?? true,
    });
    this.bucket = settings.bucket;
  }

  /** Creates the bucket on first write when it does not exist (a fresh MinIO, say). */
  private ready(): Promise<void> {
    this.bucketReady ??= (async () => {
      if (!(await this.client.bucketExists(this.bucket))) await this.client.makeBucket(this.bucket);
    })().catch((err) => {
      this.bucketReady = undefined;
      throw err;
    });
    return this.bucketReady;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<number> {
    checkBlobKey(key);
    await this.ready();
    const headers = { 'Content-Type': contentType };
    let uploadId: string | undefined;
    const etags: { part: number; etag: string }[] = [];
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let total = 0;
    const flushPart = async () => {
      const payload = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      uploadId ??= await this.client.initiateNewMultipartUpload(this.bucket, key, headers);
      const part = etags.length + 1;
      const { etag } = await this.client.uploadPart({ bucketName: this.bucket, objectName: key, uploadID: uploadId, partNumber: part, headers: { 'Content-Length': payload.length } }, payload);
      etags.push({ part, etag });
    };
    try {
      for await (const chunk of body) {
        pending.push(chunk);
        pendingBytes += chunk.length;
        total += chunk.length;
        if (pendingBytes >= PART_BYTES) await flushPart();
      }
      if (uploadId === undefined) {
        const whole = Buffer.concat(pending, pendingBytes);
        await this.client.putObject(this.bucket, key, whole, whole.length, headers);
      } else {
        if (pendingBytes > 0) await flushPart();
        await this.client.completeMultipartUpload(this.bucket, key, uploadId, etags);
      }
      return total;
    } catch (err) {
      if (uploadId !== undefined) await this.client.abortMultipartUpload(this.bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    checkBlobKey(key);
    if (range) return this.client.getPartialObject(this.bucket, key, range.start, range.end - range.start + 1);
    return this.client.getObject(this.bucket, key);
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    checkBlobKey(key);
    try {
      const s = await this.client.statObject(this.bucket, key);
      return { key, size: s.size, modifiedAt: s.lastModified.getTime() };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkBlobKey(key);
    await this.client.removeObject(this.bucket, key);
  }

  async *list(): AsyncIterable<BlobInfo> {
    for await (const item of this.client.listObjectsV2(this.bucket, '', true) as AsyncIterable<{ name?: string; size: number; lastModified: Date }>) {
      if (item.name) yield { key: item.name, size: item.size, modifiedAt: item.lastModified.getTime() };
    }
  }

  /** A crash mid-upload leaves an unfinished multipart upload, invisible as an object; S3 lifecycle rules clear those. */
  async sweepPartial(_olderThanMs: number): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {}
}

function isNotFound(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'NotFound' || code === 'NoSuchKey';
}
