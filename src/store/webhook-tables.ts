// Table types of the task webhooks (migration 016), kept beside schema.ts so that file stays readable.

/** An https endpoint a workspace registered for task events. */
export interface WebhookEndpointsTable {
  /** "whep_...", sorting in creation order. */
  id: string;
  workspace_id: string;
  url: string;
  /** "whsec_" + base64 of 32 random bytes: the HMAC key the receiver also holds (shown once, at creation or rotation). */
  secret: string;
  /** The secret before the last rotation, still signing until previous_until. */
  previous_secret: string | null;
  /** Unix milliseconds. */
  previous_until: number | null;
  /** JSON array of the event types sent here. */
  events: string;
  /** 1 or 0 (SQLite has no boolean). */
  enabled: number;
  /** Unix seconds. */
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint: its body as signed, and where its delivery stands. */
export interface WebhookDeliveriesTable {
  /** "msg_...": the webhook-id, the same on every attempt (the receiver's idempotency key). */
  id: string;
  endpoint_id: string;
  workspace_id: string;
  event_type: string;
  /** The task the event is about. */
  subject_id: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  /** Unix milliseconds. */
  created_at: number;
  next_attempt_at: number;
  last_attempt_at: number | null;
  /** The receiver's last HTTP status; null when it could not be reached. */
  last_status: number | null;
  /** Why the last attempt failed (bounded), or null. */
  last_error: string | null;
  lease_owner: string | null;
  /** Unix milliseconds; 0 when nobody holds it. */
  lease_until: number;
}
