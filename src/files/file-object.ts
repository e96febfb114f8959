// The wire shape of a file, with a freshly signed content URL, and where that URL points.
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import type { FileRow } from './repository.js';

export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  expires_at: number;
  filename: string;
  purpose: string;
  content_type: string;
  source: FileRow['source'];
  /** The openai SDK's FileObject requires it; a stored file is always complete. */
  status: 'processed';
  url: string;
}

/** server.publicUrl when set, else the scheme and Host the request came in on. */
export function publicBaseUrl(services: Services, req: FastifyRequest): string {
  const configured = services.config.gateway.server.publicUrl;
  if (configured) return configured.replace(/\/+$/, '');
  return `${req.protocol}://${req.host}`;
}

/** `<base>/api/v1/files/<id>/content?token=...`, valid for files.signing.urlLifetimeSeconds. */
export function signContentUrl(services: Services, fileId: string, baseUrl: string, now = Date.now()): { url: string; expiresAt: number } {
  const { token, expiresAt } = services.files.signer.sign(fileId, now);
  return { url: `${baseUrl}/api/v1/files/${fileId}/content?token=${token}`, expiresAt };
}

export function toFileObject(services: Services, row: FileRow, baseUrl: string, now = Date.now()): FileObject {
  return {
    id: row.id,
    object: 'file',
    bytes: row.bytes,
    created_at: row.created_at,
    expires_at: row.expires_at,
    filename: row.filename,
    purpose: row.purpose,
    content_type: row.content_type,
    source: row.source,
    status: 'processed',
    url: signContentUrl(services, row.id, baseUrl, now).url,
  };
}
