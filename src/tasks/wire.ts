// A task as clients see it: status and progress; on completion the archived file with a fresh signed URL and the cost;
// the provider's URL when archiving failed; the reason on failure.
import type { FastifyRequest } from 'fastify';
import type { ChargeRef } from '../billing/meter.js';
import { renderCost } from '../billing/cost.js';
import { publicBaseUrl, signContentUrl } from '../files/index.js';
import type { FileSettings, ServerConfig } from '../files/file-store.js';
import type { TaskParams } from './cost.js';
import type { TaskRow } from './store.js';

export function toTaskObject(services: ServerConfig & { files: FileSettings }, req: FastifyRequest, row: TaskRow): Record<string, unknown> {
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
    task.file_id = row.file_id;
    task.url = row.file_id ? signContentUrl(services, row.file_id, publicBaseUrl(services, req)).url : null;
    task.archive_status = row.archive_status;
    if (row.provider_url) task.provider_url = row.provider_url;
    if (row.archive_status === 'failed' && row.error_message) task.archive_error = row.error_message;
    const { currency } = JSON.parse(row.charge) as ChargeRef;
    task.cost = renderCost({ micros: Number(row.cost_micros ?? 0), currency });
  }
  task.error = row.status === 'failed' ? { code: row.error_code, message: row.error_message } : null;
  return task;
}
