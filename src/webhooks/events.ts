// Task events for webhooks: when a task ends, one delivery row per enabled endpoint of its workspace that takes the event,
// written in the transaction of the task's final status (src/tasks/finish.ts), its body the Standard Webhooks envelope
// `{type, timestamp, data}` with the task as a status request shows it (a signed link to the archived file, valid for
// files.signing.urlLifetimeSeconds; a status request gives a fresh one).
import type { TaskEvents } from '../tasks/deps.js';
import type { TaskRow } from '../tasks/store.js';
import { toTaskObjectsAt, type TaskObjectDeps } from '../tasks/wire.js';
import type { Db } from '../store/db.js';
import { insertDeliveries, newDeliveryId, subscribedEndpoints, type DeliveryRow } from './store.js';

export const EVENT_TYPES = ['video.completed', 'video.failed', 'image.completed', 'image.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: unknown): value is EventType => typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);

/** The event a finished task sets off, or undefined for a task still running. */
export function eventTypeOf(task: Pick<TaskRow, 'object' | 'status'>): EventType | undefined {
  if (task.status !== 'completed' && task.status !== 'failed') return undefined;
  return `${task.object === 'video.task' ? 'video' : 'image'}.${task.status}`;
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
      const now = Date.now();
      const payload = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
      const rows: DeliveryRow[] = endpoints.map((endpoint) => ({
        id: newDeliveryId(now),
        endpoint_id: endpoint.id,
        workspace_id: task.workspace_id,
        event_type: type,
        subject_id: task.id,
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
    },
  };
}
