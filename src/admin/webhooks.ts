// Webhook endpoints through the admin service's reach and audit log: register (the secret shown once), list, change
// (enable, disable, events, URL), rotate the secret (shown once; the old one keeps signing for a grace period), delete,
// and the recent deliveries. The URL is checked at registration (https on 443, no credentials, no private literal
// address, network.allowHosts as for any fetch); the address it resolves to is checked again at every delivery.
import { NotFoundError, ValidationError } from '../base/errors.js';
import { AllowList, urlRefusal } from '../net/address-policy.js';
import { appendAudit } from '../store/audit.js';
import { defaultEventTypes, isEventType } from '../webhooks/events.js';
import { newWebhookSecret } from '../webhooks/secret.js';
import { deleteEndpoint, endpointView, findEndpoint, insertEndpoint, listEndpoints, lockWorkspaceEndpoints, newEndpointId, recentDeliveries, updateEndpoint, type DeliveryRow, type EndpointRow, type EndpointView } from '../webhooks/store.js';
import type { AdminService } from './service.js';

const MAX_URL = 2048;
/** Endpoints one workspace may register. */
export const MAX_ENDPOINTS = 20;

export interface DeliveryView {
  id: string;
  event_type: string;
  task_id: string;
  status: string;
  attempts: number;
  created_at: number;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
}

export interface EndpointInput {
  url?: string;
  events?: string[];
  enabled?: boolean;
}

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    event_type: row.event_type,
    task_id: row.subject_id,
    status: row.status,
    attempts: row.attempts,
    created_at: seconds(row.created_at)!,
    last_attempt_at: seconds(row.last_attempt_at),
    next_attempt_at: row.status === 'pending' ? seconds(row.next_attempt_at) : null,
    last_status: row.last_status,
    last_error: row.last_error,
  };
}

/** An endpoint URL the gateway will post to, or a 400 that says why not. */
export function checkEndpointUrl(value: unknown, allowHosts: readonly string[]): string {
  if (typeof value !== 'string' || !value || value.length > MAX_URL) throw new ValidationError(`url must be an https URL of at most ${MAX_URL} characters`, 'url');
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url) throw new ValidationError('url is not a URL', 'url');
  const refused = urlRefusal(url, new AllowList(allowHosts));
  if (refused) throw new ValidationError(`url is refused: ${refused}`, 'url', 'webhook_url_refused');
  return url.href;
}

/** Most event types one endpoint takes. */
const MAX_EVENTS = 32;

function checkEvents(value: unknown, known: readonly string[]): string[] {
  if (!Array.isArray(value) || !value.length || value.length > MAX_EVENTS || !value.every(isEventType)) {
    const unknown = Array.isArray(value) ? value.filter((v) => !isEventType(v)).slice(0, 4).map((v) => String(v).slice(0, 40)) : [];
    throw new ValidationError(`events must list 1 to ${MAX_EVENTS} event types, such as ${known.join(', ')} (a task family's <object>.completed or .failed)${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`, 'events');
  }
  return [...new Set(value)];
}

export class WebhookAdmin {
  constructor(
    private readonly admin: AdminService,
    /** network.allowHosts: the exceptions to the public-address rule, as for any fetch. */
    private readonly allowHosts: readonly string[],
    /** The event types the catalogue's families and the batches set off (webhooks/events.ts eventTypesOf), read when needed. */
    private readonly eventTypes: () => readonly string[],
  ) {}

  private get db() {
    return this.admin.db;
  }

  /** The endpoint with this id in the caller's reach, or a 404. */
  private async endpoint(id: string): Promise<EndpointRow> {
    const row = typeof id === 'string' ? await findEndpoint(this.db, id) : undefined;
    const visible = row && (await this.admin.workspace(row.workspace_id).then(() => true, () => false));
    if (!row || !visible) throw new NotFoundError(`no webhook endpoint with id "${String(id).slice(0, 64)}"`, 'webhook_not_found');
    return row;
  }

  async list(workspaceId: string): Promise<EndpointView[]> {
    const workspace = await this.admin.workspace(workspaceId);
    return (await listEndpoints(this.db, workspace.id)).map(endpointView);
  }

  async get(id: string): Promise<EndpointView> {
    return endpointView(await this.endpoint(id));
  }

  /** Registers an endpoint; the answer holds its signing secret, which is never shown again. */
  async create(workspaceId: string, input: EndpointInput, now = Date.now()): Promise<EndpointView & { secret: string }> {
    const workspace = await this.admin.workspace(workspaceId);
    const url = checkEndpointUrl(input.url, this.allowHosts);
    const events = input.events === undefined ? defaultEventTypes(this.eventTypes()) : checkEvents(input.events, this.eventTypes());
    const row: EndpointRow = { id: newEndpointId(now), workspace_id: workspace.id, url, secret: newWebhookSecret(), previous_secret: null, previous_until: null, events: JSON.stringify(events), enabled: input.enabled === false ? 0 : 1, created_at: Math.floor(now / 1000) };
    return this.db.transaction().execute(async (trx) => {
      await lockWorkspaceEndpoints(trx, workspace.id);
      if ((await listEndpoints(trx, workspace.id)).length >= MAX_ENDPOINTS) throw new ValidationError(`a workspace may register at most ${MAX_ENDPOINTS} webhook endpoints`, 'url', 'too_many_webhooks');
      await insertEndpoint(trx, row);
      await appendAudit(trx, this.admin.actor, { action: 'webhook.create', workspaceId: workspace.id, targetId: row.id, after: endpointView(row) }, now);
      return { ...endpointView(row), secret: row.secret };
    });
  }

  /** Changes the URL, the events or whether it is enabled; fields left out stay as they are. */
  async update(id: string, input: EndpointInput, now = Date.now()): Promise<EndpointView> {
    const before = await this.endpoint(id);
    const set: Partial<EndpointRow> = {};
    if (input.url !== undefined) set.url = checkEndpointUrl(input.url, this.allowHosts);
    if (input.events !== undefined) set.events = JSON.stringify(checkEvents(input.events, this.eventTypes()));
    if (input.enabled !== undefined) set.enabled = input.enabled ? 1 : 0;
    const after = { ...before, ...set };
    if (JSON.stringify(endpointView(after)) === JSON.stringify(endpointView(before))) return endpointView(before);
    await this.db.transaction().execute(async (trx) => {
      await updateEndpoint(trx, id, set);
      const action = Object.keys(set).length === 1 && set.enabled !== undefined ? (set.enabled ? 'webhook.enable' : 'webhook.disable') : 'webhook.update';
      await appendAudit(trx, this.admin.actor, { action, workspaceId: before.workspace_id, targetId: id, before: endpointView(before), after: endpointView(after) }, now);
    });
    return endpointView(after);
  }

  /** A new secret, shown this once; the old one also signs for webhooks.rotationGraceSeconds. */
  async rotate(id: string, graceMs: number, now = Date.now()): Promise<EndpointView & { secret: string }> {
    const before = await this.endpoint(id);
    const secret = newWebhookSecret();
    await this.db.transaction().execute(async (trx) => {
      await updateEndpoint(trx, id, { secret, previous_secret: graceMs > 0 ? before.secret : null, previous_until: graceMs > 0 ? now + graceMs : null });
      await appendAudit(trx, this.admin.actor, { action: 'webhook.rotate', workspaceId: before.workspace_id, targetId: id, before: endpointView(before), after: { ...endpointView(before), previous_secret_until: graceMs > 0 ? new Date(now + graceMs).toISOString() : null } }, now);
    });
    return { ...endpointView(before), secret };
  }

  /** Removes the endpoint; its pending deliveries are dropped. */
  async delete(id: string, now = Date.now()): Promise<void> {
    const before = await this.endpoint(id);
    await this.db.transaction().execute(async (trx) => {
      await deleteEndpoint(trx, id);
      await appendAudit(trx, this.admin.actor, { action: 'webhook.delete', workspaceId: before.workspace_id, targetId: id, before: endpointView(before), after: null }, now);
    });
  }

  async deliveries(id: string, query: { limit?: number; before?: string }): Promise<{ data: DeliveryView[]; has_more: boolean }> {
    const endpoint = await this.endpoint(id);
    const limit = query.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ValidationError('limit must be an integer from 1 to 100', 'limit');
    if (query.before !== undefined && !/^msg_[0-9a-f]{28}$/.test(query.before)) throw new ValidationError('before must be a delivery id', 'before');
    const rows = await recentDeliveries(this.db, endpoint.id, limit + 1, query.before);
    return { data: rows.slice(0, limit).map(deliveryView), has_more: rows.length > limit };
  }
}
