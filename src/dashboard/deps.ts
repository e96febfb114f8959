// What the dashboard's pages use, named apart from the code that assembles the gateway: the file store (rows, bytes,
// signed links) and the current config.
import type { FileStore, ServerConfig } from '../files/file-store.js';

export interface DashboardDeps extends FileStore, ServerConfig {}
