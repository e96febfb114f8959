// The file store's services (blob store, URL signer, options), built once from config and closed with the gateway.
import type { LoadedConfig } from '../compile/loaded-config.js';
import type { Db } from '../store/database.js';
import { createBlobStore, type BlobStore } from './blob-store.js';
import { filesOptions, type FilesOptions } from './options.js';
import { createUrlSigner, type UrlSigner } from './signing.js';

export interface FileServices {
  options: FilesOptions;
  signer: UrlSigner;
}

export async function createFileServices(config: LoadedConfig, db: Db, dataPath: (p: string) => string): Promise<{ blobs: BlobStore; files: FileServices }> {
  const options = filesOptions(config);
  const blobs = await createBlobStore(config, dataPath);
  return { blobs, files: { options, signer: await createUrlSigner(options, db) } };
}
