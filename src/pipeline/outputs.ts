// The outputs stage: media an answer carries (a URL, or base64), where its operation declares them, are archived into the
// workspace file store before the answer is sent; each item keeps its upstream fields and gains svc_file_id, svc_url, archive_status.
import { pathSegments } from '../config/paths.js';
import type { MediaItems } from '../config/types.js';
import { signContentUrl } from '../files/index.js';
import { archiveResult, resultSource } from './archive.js';
import type { Call } from './call.js';
import { forgetSourceText } from '../http/json-text.js';
import { readPath } from './paths.js';

/** The three archive fields every result carries (the ids null when the archive failed), and why it failed. */
export interface ArchivedResult {
  svc_file_id: string | null;
  svc_url: string | null;
  archive_status: 'archived' | 'failed';
  archive_error?: string;
}

/** Archives one result from its URL (through the SSRF guard, streamed) or its base64, by the one archive routine; never throws. */
export async function archiveMedia(call: Call, source: { url?: unknown; base64?: unknown }, filename: string, purpose: string, model: unknown): Promise<ArchivedResult> {
  const { services } = call;
  const bytes = resultSource(services.remote, source, call.signal);
  if (!bytes) return { svc_file_id: null, svc_url: null, archive_status: 'failed', archive_error: 'the result carries neither a URL nor base64 data' };
  const labels = { filename, purpose, model: typeof model === 'string' ? model : null, requestId: call.requestId };
  const outcome = await archiveResult(services, { workspaceId: call.auth.workspaceId, ...labels, ...bytes });
  if (outcome.fileId) return { svc_file_id: outcome.fileId, svc_url: signContentUrl(services, outcome.fileId, call.baseUrl()).url, archive_status: 'archived' };
  call.log.warn({ err: outcome.cause }, 'archiving a generated result failed');
  return { svc_file_id: null, svc_url: null, archive_status: 'failed', archive_error: outcome.error };
}

/** A spec's Liquid paths (`"{{ answer.data }}"`, `"{{ item.url }}"`) as the members they walk, parsed once. */
interface MediaPaths {
  list?: string[];
  item?: string[];
  url?: string[];
  base64?: string[];
}
const parsedPaths = new WeakMap<MediaItems, MediaPaths>();
function pathsOf(spec: MediaItems): MediaPaths {
  let paths = parsedPaths.get(spec);
  if (!paths) {
    const parse = (text: string | undefined) => (text === undefined ? undefined : pathSegments(text));
    paths = { list: parse(spec.list), item: parse(spec.item), url: parse(spec.url), base64: parse(spec.base64) };
    parsedPaths.set(spec, paths);
  }
  return paths;
}

/** The media items `spec` points at in `document`. */
function itemsOf(spec: MediaItems, paths: MediaPaths, document: unknown): Record<string, unknown>[] {
  const found = paths.list ? readPath(document, paths.list) : paths.item ? [readPath(document, paths.item)] : [];
  if (!Array.isArray(found)) return [];
  return found.filter((item): item is Record<string, unknown> => !!item && typeof item === 'object' && Object.entries(spec.when ?? {}).every(([k, v]) => item[k] === v));
}

/**
 * Archives every media item of `document` in place, in order. Returns how many items there were. With `archived`
 * (one map per stream), an item whose `id` was archived before in the same answer (a streamed item, then the same item
 * in the final event) gets the same archive fields again, not a second file.
 */
export async function archiveOutputs(call: Call, spec: MediaItems | undefined, document: unknown, archived?: Map<string, ArchivedResult>, model: unknown = call.body.model): Promise<number> {
  if (!spec) return 0;
  const paths = pathsOf(spec);
  const items = itemsOf(spec, paths, document);
  // Items gain archive fields in place: the answer's text no longer says what it holds.
  if (items.length && document && typeof document === 'object') forgetSourceText(document);
  for (const [index, item] of items.entries()) {
    const id = typeof item.id === 'string' ? item.id : undefined;
    const known = id !== undefined ? archived?.get(id) : undefined;
    if (known) {
      Object.assign(item, known);
      continue;
    }
    const source = { url: paths.url && readPath(item, paths.url), base64: paths.base64 && readPath(item, paths.base64) };
    const result = await archiveMedia(call, source, `${(spec.purpose ?? 'image_generation').replace(/_generation$/, '')}-${call.requestId}-${archived?.size ?? 0}-${index}`, spec.purpose ?? 'image_generation', model);
    if (id !== undefined) archived?.set(id, result);
    Object.assign(item, result);
  }
  return items.length;
}
