// Sends webhook deliveries: a background job on every process that claims due deliveries with a lease on their row (so
// each attempt goes out from one replica), POSTs the signed event through the SSRF guard with a bounded time and a bounded
// read of the answer, and records the outcome: delivered on a 2xx; otherwise tried again on the retry schedule until
// webhooks.maxAttempts, then failed. A process that dies mid-attempt leaves its lease to run out; the delivery is then sent
// again under the same webhook-id (at least once: receivers deduplicate on it).
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { RemoteFetchError, type PostAnswer, type RemoteFetcher } from '../net/remote-fetch.js';
import type { Db } from '../store/db.js';
import { signedHeaders } from './secret.js';
import { retryDelayMs, webhooksOptions, type WebhooksOptions } from './options.js';
import { appendAudit } from '../store/audit.js';
import { claimDelivery, dueDeliveryIds, endpointView, findEndpoint, recordAttempt, type DeliveryRow, type EndpointRow } from './store.js';

/** Characters of a failure reason kept on the row (and in a log line). */
const MAX_ERROR = 300;

export interface WebhookDelivererDeps {
  readonly config: { gateway: Pick<GatewayConfig, 'webhooks'> };
  db: Db;
  /** The SSRF guard every delivery goes through (network.allowHosts applies). */
  remote: RemoteFetcher;
  /** This process among the replicas: the owner name of the leases it takes. */
  instanceId: string;
  log: Logger;
}

/** What one attempt came to. */
interface Outcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
  /** Try again no sooner than this many milliseconds (a retry-after). */
  atLeastMs?: number;
  /** No point in trying again (a refused address, a 410). */
  final?: boolean;
}

export class WebhookDeliverer {
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private ticking = false;
  private readonly working = new Set<Promise<void>>();

  constructor(private readonly deps: WebhookDelivererDeps) {}

  private get options(): WebhooksOptions {
    return webhooksOptions(this.deps.config);
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
  }

  /** Stops looking for work and waits for the attempts in flight (each ends by webhooks.timeoutSeconds). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.working.size) await Promise.allSettled([...this.working]);
  }

  /** One look for due deliveries: each one this process can claim is attempted. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const { batchSize, leaseMs } = this.options;
      for (const id of await dueDeliveryIds(this.deps.db, Date.now(), batchSize)) {
        if (this.stopped) break;
        if (!(await claimDelivery(this.deps.db, id, this.deps.instanceId, leaseMs))) continue;
        const work = this.attempt(id).catch((err) => this.deps.log.error({ err, delivery: id }, 'a webhook attempt failed in the gateway'));
        this.working.add(work);
        void work.finally(() => this.working.delete(work));
      }
    } catch (err) {
      this.deps.log.error({ err }, 'looking for due webhook deliveries failed');
    } finally {
      this.ticking = false;
    }
  }

  /** One attempt of a claimed delivery, and its outcome recorded. */
  private async attempt(id: string): Promise<void> {
    const { db, instanceId } = this.deps;
    const delivery = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    if (!delivery || delivery.lease_owner !== instanceId) return;
    const endpoint = await findEndpoint(db, delivery.endpoint_id);
    const options = this.options;
    const now = Date.now();
    const outcome: Outcome = endpoint?.enabled ? await this.send(endpoint, delivery, options, now) : { delivered: false, status: null, error: 'the endpoint was disabled', final: true };
    const attempts = delivery.attempts + (endpoint?.enabled ? 1 : 0);
    const done = outcome.delivered || outcome.final || attempts >= options.maxAttempts;
    const next = Math.max(retryDelayMs(options, attempts), outcome.atLeastMs ?? 0);
    await recordAttempt(db, id, instanceId, {
      status: outcome.delivered ? 'delivered' : done ? 'failed' : 'pending',
      attempts,
      last_attempt_at: now,
      last_status: outcome.status,
      last_error: outcome.error,
      next_attempt_at: done ? now : Date.now() + next,
    });
    if (outcome.status === 410 && endpoint) await this.disableGone(endpoint, delivery.id);
    if (!outcome.delivered) this.deps.log.info({ delivery: id, endpoint: delivery.endpoint_id, attempts, status: outcome.status, error: outcome.error, final: done }, 'a webhook attempt failed');
  }

  /** 410 Gone: the receiver wants no more (the Standard Webhooks advice): the endpoint is disabled, and the audit log says so. */
  private async disableGone(endpoint: EndpointRow, deliveryId: string): Promise<void> {
    const { db, instanceId } = this.deps;
    const disabled = await db.transaction().execute(async (trx) => {
      // Once: another replica's 410 for the same endpoint may have disabled it already.
      const changed = await trx.updateTable('webhook_endpoints').set({ enabled: 0 }).where('id', '=', endpoint.id).where('enabled', '=', 1).executeTakeFirst();
      if (!changed.numUpdatedRows) return false;
      const before = endpointView(endpoint);
      const actor = { kind: 'gateway' as const, id: instanceId, address: null };
      await appendAudit(trx, actor, { action: 'webhook.disable', workspaceId: endpoint.workspace_id, targetId: endpoint.id, before, after: { ...before, enabled: false, reason: `the receiver answered 410 Gone to delivery ${deliveryId}` } });
      return true;
    });
    if (disabled) this.deps.log.warn({ endpoint: endpoint.id }, 'a webhook endpoint answered 410 Gone and was disabled');
  }

  private async send(endpoint: EndpointRow, delivery: DeliveryRow, options: WebhooksOptions, now: number): Promise<Outcome> {
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret && (endpoint.previous_until ?? 0) > now) secrets.push(endpoint.previous_secret);
    let answer: PostAnswer;
    try {
      answer = await this.deps.remote.post(endpoint.url, { headers: signedHeaders(delivery.id, delivery.payload, secrets, now), body: delivery.payload }, options);
    } catch (err) {
      if (!(err instanceof RemoteFetchError)) throw err;
      // A refused address stays refused: the delivery fails at once rather than knocking on it for days.
      return { delivered: false, status: null, error: err.message.slice(0, MAX_ERROR), final: !err.transient };
    }
    if (answer.status >= 200 && answer.status < 300) return { delivered: true, status: answer.status, error: null };
    const retryAfter = Number(answer.headers['retry-after']);
    return {
      delivered: false,
      status: answer.status,
      error: `answered ${answer.status}${answer.answer ? `: ${answer.answer.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, MAX_ERROR - 20)}` : ''}`,
      atLeastMs: Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 86_400) * 1000 : undefined,
      final: answer.status === 410,
    };
  }
}
