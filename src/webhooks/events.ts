// Task and batch events for webhooks: when a task or a batch ends, one delivery row per enabled endpoint of its
// workspace that takes the event, written in the transaction of its final status (src/tasks/finish.ts), its body the Standard Webhooks envelope
// `{type, timestamp, data}` with the task as a status request shows it (a signed link to the archived file, valid for
// files.signing.urlLifetimeSeconds; a status request gives a fresh one).
import type { TaskEvents } from '../tasks/deps.js';
import { taskEventOf } from '../tasks/family.js';
import type { TaskRow } from '../tasks/store.js';
import { toTaskObjectsAt, type TaskObjectDeps } from '../tasks/wire.js';
import type { Db } from '../store/db.js';
import type { BatchEvents } from '../batches/runner.js';
import { toAnthropicBatch } from '../batches/anthropic-wire.js';
import { toOpenAIBatch } from '../batches/openai-wire.js';
import type { BatchRow } from '../batches/store.js';
import type { GuardrailBlock, GuardrailEvents } from '../pipeline/guard-events.js';
import { insertDeliveries, newDeliveryId, subscribedEndpoints, type DeliveryRow } from './store.js';

export const EVENT_TYPES = ['video.completed', 'video.failed', 'image.completed', 'image.failed', 'batch.completed', 'batch.failed', 'guardrail.blocked'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** What an endpoint registered without `events` takes: the task and batch events (guardrail.blocked is asked for by name). */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((type) => type !== 'guardrail.blocked');

export const isEventType = (value: unknown): value is EventType => typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

/** The event a finished task sets off, or undefined for a task still running. */
export function eventTypeOf(task: Pick<TaskRow, 'object' | 'status'>): EventType | undefined {
  if (task.status !== 'completed' && task.status !== 'failed') return undefined;
  const type = taskEventOf(task.object, task.status);
  return isEventType(type) ? type : undefined;
}

/** Where signed links in an event point: server.publicUrl, else the configured listen address. */
function eventBaseUrl(services: TaskObjectDeps): string {
  const { publicUrl, host, port } = services.config.gateway.server as { publicUrl: string; host: string; port: number };
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The runner's TaskEvents: delivery rows for the endpoints subscribed to the task's event. */
export function webhookTaskEvents(services: Omit<TaskObjectDeps, 'db'>): TaskEvents {
  return {
    async taskFinished(db: Db, task: TaskRow): Promise<void> {
      const type = eventTypeOf(task);
      if (!type) return;
      const endpoints = await subscribedEndpoints(db, task.workspace_id, type);
      if (!endpoints.length) return;
      const [data] = await toTaskObjectsAt({ ...services, db }, eventBaseUrl({ ...services, db }), [task]);
      await insertEvents(db, endpoints, type, task.workspace_id, task.id, data);
    },
  };
}

/**
 * The batch runner's events: batch.completed when a batch completed, batch.failed when it failed or expired (a cancel
 * is the client's own doing and sends none); the data is the batch as its API shows it (OpenAI's Batch or Anthropic's
 * MessageBatch).
 */
export function webhookBatchEvents(services: Omit<TaskObjectDeps, 'db'>): BatchEvents {
  return {
    async batchFinished(db: Db, batch: BatchRow): Promise<void> {
      const type = batch.status === 'completed' ? 'batch.completed' : batch.status === 'failed' || batch.status === 'expired' ? 'batch.failed' : undefined;
      if (!type) return;
      const endpoints = await subscribedEndpoints(db, batch.workspace_id, type);
      if (!endpoints.length) return;
      const data = batch.object === 'message_batch' ? toAnthropicBatch(batch, eventBaseUrl({ ...services, db })) : toOpenAIBatch(batch);
      await insertEvents(db, endpoints, type, batch.workspace_id, batch.id, data);
    },
  };
}

/**
 * guardrail.blocked: a guardrail refused a request's input, ended its answer or cut its stream. The data names the
 * guardrail, the stage, the request and the key, and counts what matched by detector; never the text it matched.
 */
export function webhookGuardrailEvents(db: Db, onError: (err: unknown) => void): GuardrailEvents {
  return {
    blocked(block: GuardrailBlock): void {
      const type = 'guardrail.blocked';
      const data = { guardrail: block.verdict.id, stage: block.verdict.stage, matches: block.verdict.matches ?? {}, request_id: block.requestId, key_id: block.keyId, model: block.model };
      subscribedEndpoints(db, block.workspaceId, type)
        .then((endpoints) => (endpoints.length ? insertEvents(db, endpoints, type, block.workspaceId, block.requestId, data) : undefined))
        .catch(onError);
    },
  };
}

/** One pending delivery of the event to each endpoint subscribed to it, in the caller's transaction. */
async function insertEvents(db: Db, endpoints: { id: string }[], type: EventType, workspaceId: string, subjectId: string, data: unknown): Promise<void> {
  const now = Date.now();
  const payload = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  const rows: DeliveryRow[] = endpoints.map((endpoint) => ({
    id: newDeliveryId(now),
    endpoint_id: endpoint.id,
    workspace_id: workspaceId,
    event_type: type,
    subject_id: subjectId,
    payload,
    status: 'pending',
    attempts: 0,
    created_at: now,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    lease_owner: null,
    lease_until: 0,
  }));
  await insertDeliveries(db, rows);
}
