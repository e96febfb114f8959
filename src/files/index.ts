// What other capabilities use of the file store: archive a stream as a file, look one up, sign its content URL.
export { storeFile, writeFileBytes, commitFile, discardFileBytes, type StoredBytes, type FileLabels, type WriteBytesInput } from './store-file.js';
export { signContentUrl, publicBaseUrl, toFileObject, type FileObject } from './file-object.js';
export { findFile, type FileRow } from './repository.js';
export { isFileId } from './ids.js';
export { base64Chunks } from './base64-chunks.js';
export { sniffContentType, ACCEPTED_FORMATS } from '../http/sniff.js';
