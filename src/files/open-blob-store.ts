// Opens the blob store storage.blobs names: a local directory (default) or S3-compatible storage.
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { BlobStore } from './blob-store.js';

export async function createBlobStore(config: LoadedConfig, dataPath: (p: string) => string): Promise<BlobStore> {
  const blobs = config.gateway.storage.blobs;
  if (blobs.driver === 's3') {
    const { S3BlobStore } = await import('./s3-blob-store.js');
    return new S3BlobStore(blobs);
  }
  const { LocalBlobStore } = await import('./local-blob-store.js');
  return new LocalBlobStore(dataPath(blobs.path));
}
