// A task as clients see it: status and progress; on completion the archived file with a fresh signed URL and the cost
// (archive_status "expired" or "deleted", and no URL, once that file is gone); the provider's URL when archiving failed;
// the reason on failure.
import type { FastifyRequest } from 'fastify';
import type { ChargeRef } from '../billing/meter.js';
import { renderCost } from '../billing/cost.js';
import { publicBaseUrl, signContentUrl } from '../files/index.js';
import type { FileSettings, ServerConfig } from '../files/file-store.js';
import type { TaskParams } from './cost.js';
import type { TaskRow } from './store.js';
import type { Db } from '../store/database.js';

/** What a task's wire object needs: the task and file rows, and the signer and address of its content link. */
export type TaskObjectDeps = ServerConfig & { db: Db; files: FileSettings };

/** When each archived file expires, for the files that still have a row. */
async function fileExpiries(db: Db, rows: readonly TaskRow[]): Promise<Map<string, number>> {
  const ids = rows.filter((r) => r.status === 'completed' && r.file_id).map((r) => r.file_id!);
  if (!ids.length) return new Map();
  const files = await db.selectFrom('files').select(['id', 'expires_at']).where('id', 'in', ids).execute();
  return new Map(files.map((f) => [f.id, Number(f.expires_at)]));
}

/** Where a task's content link points: the gateway's address as the request reached it (or that address, worked out already). */
type LinkBase = FastifyRequest | string;

/** Tasks as clients see them, each archived file checked: one query for the lot. */
export async function toTaskObjects(services: TaskObjectDeps, req: LinkBase, rows: readonly TaskRow[]): Promise<Record<string, unknown>[]> {
  return toTaskObjectsAt(services, typeof req === 'string' ? req : publicBaseUrl(services, req), rows);
}

/** The same, with signed links on `baseUrl` (no request at hand: a webhook event). */
export async function toTaskObjectsAt(services: TaskObjectDeps, baseUrl: string, rows: readonly TaskRow[]): Promise<Record<string, unknown>[]> {
  const expiries = await fileExpiries(services.db, rows);
  const now = Math.floor(Date.now() / 1000);
  return rows.map((row) => taskObject(services, baseUrl, row, (id) => {
    const expires = expiries.get(id);
    return expires === undefined ? (row.archive_status === 'expired' ? 'expired' : 'deleted') : expires <= now ? 'expired' : 'archived';
  }));
}

export async function toTaskObject(services: TaskObjectDeps, req: LinkBase, row: TaskRow): Promise<Record<string, unknown>> {
  return (await toTaskObjects(services, req, [row]))[0];
}

function taskObject(services: TaskObjectDeps, baseUrl: string, row: TaskRow, fileState: (id: string) => 'archived' | 'expired' | 'deleted'): Record<string, unknown> {
  const params = JSON.parse(row.params) as TaskParams;
  const task: Record<string, unknown> = {
    id: row.id,
    object: row.object,
    status: row.status,
    model: row.model,
    created_at: row.created_at,
    progress: row.status === 'completed' ? 100 : (row.progress ?? 0),
    prompt: params.prompt,
  };
  if (params.seconds !== undefined) task.seconds = String(params.seconds);
  if (params.size !== undefined) task.size = params.size;
  if (row.completed_at !== null) task.completed_at = row.completed_at;
  if (row.status === 'completed') {
    const state = row.file_id ? fileState(row.file_id) : undefined;
    task.file_id = row.file_id;
    task.url = row.file_id && state === 'archived' ? signContentUrl(services, row.file_id, baseUrl).url : null;
    task.archive_status = state ?? row.archive_status;
    if (row.provider_url) task.provider_url = row.provider_url;
    if (row.archive_status === 'failed' && row.error_message) task.archive_error = row.error_message;
    const { currency } = JSON.parse(row.charge) as ChargeRef;
    task.cost = renderCost({ micros: Number(row.cost_micros ?? 0), currency });
  }
  task.error = row.status === 'failed' ? { code: row.error_code, message: row.error_message } : null;
  return task;
}
