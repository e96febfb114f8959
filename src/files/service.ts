// The file store's parts (blob store, URL signer, options), built once from config and closed with the gateway.
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Db } from '../store/database.js';
import type { BlobStore } from './blob-store.js';
import { createBlobStore } from './open-blob-store.js';
import { filesOptions } from './options.js';
import { createUrlSigner } from './signing.js';
import type { FileSettings } from './file-store.js';

export async function openFileStore(config: LoadedConfig, db: Db, dataPath: (p: string) => string): Promise<{ blobs: BlobStore; files: FileSettings }> {
  const options = filesOptions(config);
  const blobs = await createBlobStore(config, dataPath);
  return { blobs, files: { options, signer: await createUrlSigner(options, db) } };
}
