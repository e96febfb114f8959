// Helpers for file store tests: a gateway on either blob store, multipart bodies built by hand, and the store's visible state.
import { randomBytes } from 'node:crypto';
import { startGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';
import { startS3Server, type S3Server } from './s3-server.js';

export type BlobDriver = 'local' | 's3';
export const blobDrivers: BlobDriver[] = ['local', 's3'];

export interface FilesGateway extends TestGateway {
  s3?: S3Server;
}

/** A gateway with no channels, its files on the given blob store. */
export async function startFilesGateway(driver: BlobDriver, options: Partial<TestGatewayOptions> = {}): Promise<FilesGateway> {
  const s3 = driver === 's3' ? await startS3Server() : undefined;
  const gw = await startGateway({ channels: {}, storageConfig: s3?.blobsConfig, ...options });
  return {
    ...gw,
    s3,
    async close() {
      await gw.close();
      await s3?.close();
    },
  };
}

export interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  contentType?: string;
}

/** A multipart/form-data body, so tests control field order, labels and exact sizes. */
export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----gw${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename !== undefined ? `\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`), Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** The upload form the openai SDK sends: file first, then purpose. */
export function uploadForm(bytes: Buffer, filename = 'upload.bin', purpose = 'vision', contentType?: string) {
  return multipart([
    { name: 'file', value: bytes, filename, contentType },
    { name: 'purpose', value: purpose },
  ]);
}

/** Every blob key the store holds. */
export async function blobKeys(gw: TestGateway): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of gw.services.blobs.list()) keys.push(blob.key);
  return keys.sort();
}

export async function fileRowCount(gw: TestGateway): Promise<number> {
  const row = await gw.services.db.selectFrom('files').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
