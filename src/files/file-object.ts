// The wire shape of a file, with a freshly signed content URL, and where that URL points.
import type { FastifyRequest } from 'fastify';
import type { FileSettings, ServerConfig } from './file-store.js';
import type { FileRow } from './repository.js';

/** server.trustedHosts (schemas/config/server.json fills the default). */
interface ServerSettings {
  trustedHosts: string[];
}

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

/**
 * The base of signed links: server.publicUrl when set; else the request's Host if the operator listed it in
 * server.trustedHosts; else the address the request arrived on. The Host header alone never decides where a link points.
 */
export function publicBaseUrl(services: ServerConfig, req: FastifyRequest): string {
  const { publicUrl, trustedHosts, host, port } = services.config.gateway.server as typeof services.config.gateway.server & ServerSettings;
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const requested = req.host.toLowerCase();
  if (trustedHosts.some((trusted) => trusted.toLowerCase() === requested)) return `${req.protocol}://${requested}`;
  const { localAddress, localPort } = req.socket;
  return localAddress && localPort ? `${req.protocol}://${hostForUrl(localAddress)}:${localPort}` : `http://${hostForUrl(host)}:${port}`;
}

/** An address as a URL host: IPv4-mapped IPv6 unwrapped, other IPv6 in brackets. */
function hostForUrl(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  return address.includes(':') ? `[${address}]` : address;
}

/** `<base>/api/v1/files/<id>/content?token=...`, valid for files.signing.urlLifetimeSeconds. */
export function signContentUrl(services: { files: FileSettings }, fileId: string, baseUrl: string, now = Date.now()): { url: string; expiresAt: number } {
  const { token, expiresAt } = services.files.signer.sign(fileId, now);
  return { url: `${baseUrl}/api/v1/files/${fileId}/content?token=${token}`, expiresAt };
}

export function toFileObject(services: { files: FileSettings }, row: FileRow, baseUrl: string, now = Date.now()): FileObject {
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
