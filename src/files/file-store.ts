// What the file modules use, named apart from the code that builds it: rows in the database, bytes in the blob store,
// the options and the content-URL signer.
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Db } from '../store/db.js';
import type { BlobStore } from './blob-store.js';
import type { FilesOptions } from './options.js';
import type { UrlSigner } from './signing.js';

/** The files section's options and the signer of content URLs. */
export interface FileSettings {
  options: FilesOptions;
  signer: UrlSigner;
}

/** The file store: metadata rows, blob bytes and their settings. */
export interface FileStore {
  db: Db;
  blobs: BlobStore;
  files: FileSettings;
}

/** Where signed links point: the current config's server section (public URL, trusted hosts). */
export interface ServerConfig {
  readonly config: LoadedConfig;
}
