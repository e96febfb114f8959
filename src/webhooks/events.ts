// Task and batch events for webhooks: when a task or a batch ends, one delivery row per enabled endpoint of its
// workspace that takes the event, written in the transaction of its final status (src/tasks/finish.ts), its body the Standard Webhooks envelope
// `{type, timestamp, data}` with the task as a status request shows it (a signed link to the archived file, valid for
// files.signing.urlLifetimeSeconds; a status request gives a fresh one).
import type { TaskEvents } from '../tasks/deps.js';
import { taskEventOf, taskFamilies } from '../tasks/family.js';
import type { EndpointConfig } from '../config/types.js';
import type { TaskRow } from '../tasks/store.js';
import { toTaskObjectsAt, type TaskObjectDeps } from '../tasks/wire.js';
import type { Db } from '../store/db.js';
import type { BatchEvents } from '../batches/runner.js';
import { toAnthropicBatch } from '../batches/anthropic-wire.js';
import { toOpenAIBatch } from '../batches/openai-wire.js';
import type { BatchRow } from '../batches/store.js';
import type { GuardrailBlock, GuardrailEvents } from '../pipeline/guard-events.js';
import { insertDeliveries, newDeliveryId, subscribedEndpoints, type DeliveryRow } from './store.js';

/** The events that are not a task family's. */
const OTHER_EVENT_TYPES = ['batch.completed', 'batch.failed', 'guardrail.blocked'] as const;
/** What an endpoint registered without `events` takes: all but guardrail.blocked (asked for by name). */
const NAMED_ONLY = new Set(['guardrail.blocked']);
/**
 * A task family's event: its wire object without `.task`, then `completed` or `failed` (`video.task`: `video.completed`).
 * An endpoint may name one of a family the catalogue does not declare yet (an operator's family added later).
 */
const TASK_EVENT = /^[a-z][a-z0-9_-]{0,31}\.(completed|failed)$/;

export type EventType = string;

export const isEventType = (value: unknown): value is EventType => typeof value === 'string' && ((OTHER_EVENT_TYPES as readonly string[]).includes(value) || TASK_EVENT.test(value));

/** The event types a catalogue's task objects set off, then the batch and guardrail ones: what an endpoint may take. */
export function eventTypesOf(taskObjects: Iterable<string>): string[] {
  const tasks = [...new Set(taskObjects)].flatMap((object) => [taskEventOf(object, 'completed'), taskEventOf(object, 'failed')]);
  return [...tasks.filter(isEventType), ...OTHER_EVENT_TYPES];
}

/** The event types of a loaded catalogue's task families, then the batch and guardrail ones. */
export const eventTypesOfEndpoints = (endpoints: readonly EndpointConfig[]): string[] => eventTypesOf(taskFamilies(endpoints).keys());

/** What an endpoint registered without `events` takes, of `eventTypes`. */
export const defaultEventTypes = (eventTypes: readonly string[]): string[] => eventTypes.filter((type) => !NAMED_ONLY.has(type));

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
