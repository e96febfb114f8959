// The task runner: submits each task once, then polls due tasks under a lease on their row (one process per task), backs
// off, tolerates 408/425/429/5xx, fails on repeated 404s or the timeout, archives the result and settles the charge once.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ChargeRef } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { GatewayError } from '../base/errors.js';
import { sanitizeUpstreamMessage } from '../engine/upstream.js';
import { Deadline } from '../net/deadline.js';
import { detachedCall } from '../pipeline/core.js';
import { readJsonObject } from '../pipeline/decode.js';
import { send } from '../pipeline/send.js';
import type { TaskQueue, TaskRunnerDeps } from './deps.js';
import type { Submission } from './submission.js';
import { archiveTaskResult } from './archive.js';
import { pollOnce, readSubmitAnswer } from './calls.js';
import { taskScope, type TaskScope } from './steps.js';
import { faultReason, isUpstreamTrouble } from './faults.js';
import type { TaskParams } from './cost.js';
import { settleCompletedTask } from './settle.js';
import { taskFamilies } from './family.js';
import { MAX_TEXT, progressOf, text } from './answer-text.js';
import { pollDelayMs, tasksOptions, type TasksOptions } from './options.js';
import { taskNamed, type CompiledTask, type MappedStatus } from './spec.js';
import { claimTask, dueTaskIds, findTaskById, renewTask, updateLeasedTask, type TaskRow } from './store.js';
import { finishLeasedTask } from './finish.js';

const TOLERATED = new Set([408, 425, 429]);

export class TaskRunner implements TaskQueue {
  private timer?: NodeJS.Timeout;
  private readonly abort = new AbortController();
  private readonly working = new Set<Promise<unknown>>();
  private ticking = false;
  readonly log: Logger;

  constructor(private readonly services: TaskRunnerDeps) {
    this.log = services.log;
    // Each call in flight listens for the stop until it ends: as many as calls in flight, no leak past Node's 10.
    setMaxListeners(0, this.abort.signal);
  }

  private get options(): TasksOptions {
    return tasksOptions(this.services.config);
  }

  get owner(): string {
    return this.services.instanceId;
  }

  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
  }

  /** Stops looking for work and waits for what is in flight; leases still held run out for another process to take. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    while (this.working.size) await Promise.allSettled([...this.working]);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.working.add(work);
    void work.finally(() => this.working.delete(work)).catch(() => undefined);
    return work;
  }

  /** One look for due tasks: each one this process can claim is worked on. */
  async tick(): Promise<void> {
    if (this.ticking || this.abort.signal.aborted) return;
    this.ticking = true;
    try {
      const { batchSize, leaseMs } = this.options;
      for (const id of await dueTaskIds(this.services.db, Date.now(), batchSize)) {
        if (this.abort.signal.aborted) break;
        if (await claimTask(this.services.db, id, this.owner, leaseMs)) void this.track(this.work(id));
      }
    } catch (err) {
      this.log.error({ err }, 'looking for due tasks failed');
    } finally {
      this.ticking = false;
    }
  }

  /** A status request for a due task: poll it now if no process holds it (its archive, if any, continues in the background). */
  async pollNow(row: TaskRow): Promise<void> {
    const now = Date.now();
    if (row.next_poll_at > now || row.lease_until >= now || (row.status !== 'queued' && row.status !== 'in_progress')) return;
    if (this.abort.signal.aborted || !(await claimTask(this.services.db, row.id, this.owner, this.options.leaseMs))) return;
    await this.track(this.work(row.id));
  }

  /** Submits a new task (its row already leased to this process) in the background; its answer moves it to queued or failed. */
  submit(submission: Submission): void {
    void this.track(this.runSubmit(submission));
  }

  /**
   * Sends the task once through the pipeline's send and decode (the channel's deadline, retries and breaker); its answer
   * names the upstream task and moves it to queued, or to failed.
   */
  private async runSubmit({ row, routes, task, document, done }: Submission): Promise<void> {
    const held = this.services.runtime.hold();
    const call = detachedCall(held.snapshot, this.abort.signal);
    try {
      const operation = taskScope(task, row).operation;
      // Never retried blindly: the upstream may have made the task before its answer failed.
      const sent = await send(call, routes, () => ({ operation, document, headers: task.spec.submit.headers, once: true }));
      const { route } = sent, outcome = readSubmitAnswer(task, route, row, await readJsonObject(sent));
      if (!('upstreamId' in outcome)) {
        this.log.warn({ task: row.id, channel: route.channel.id, code: outcome.code }, 'the upstream did not accept the task');
        return await this.fail(row, outcome.code, sanitizeUpstreamMessage(outcome.message, route));
      }
      await updateLeasedTask(this.services.db, row.id, this.owner, {
        status: 'queued',
        upstream_id: outcome.upstreamId,
        ...(outcome.saved && { params: JSON.stringify({ ...(JSON.parse(row.params) as TaskParams), saved: outcome.saved }) }),
        channel: route.channel.id,
        next_poll_at: Date.now() + pollDelayMs(this.options, task.spec, 0),
      });
    } catch (err) {
      // Submitted once: whatever went wrong, the task is not sent again, and nothing is billed.
      const error = err instanceof GatewayError ? err : undefined;
      this.log.warn({ err, task: row.id }, 'submitting a task failed');
      await this.fail(row, error?.code ?? 'submit_failed', error?.expose ? error.message : 'the task could not be submitted upstream');
    } finally {
      call.dispose();
      done?.();
      held.release();
    }
  }

  /** One poll of a claimed task, and whatever its answer leads to. Never throws. */
  private async work(id: string): Promise<void> {
    const row = await findTaskById(this.services.db, id).catch(() => undefined);
    if (!row || row.lease_owner !== this.owner) return;
    const held = this.services.runtime.hold();
    let archiving: Promise<void> | undefined;
    try {
      archiving = (await this.poll(row, held.snapshot))?.archiving;
    } catch (err) {
      this.log.error({ err, task: id }, 'polling a task failed');
      await this.reschedule(row, {}).catch(() => undefined);
    } finally {
      // An archive keeps the snapshot (its upstream pools) until it ends, whatever a reload does meanwhile.
      if (archiving) void this.track(archiving.finally(() => held.release()));
      else held.release();
    }
  }

  private async poll(row: TaskRow, snapshot: Snapshot): Promise<{ archiving: Promise<void> } | void> {
    const { config } = snapshot;
    // Its submitter died before the upstream answered: the task cannot be known to exist upstream, and is never sent twice.
    if (row.status === 'submitting') return this.fail(row, 'submit_interrupted', 'the gateway stopped while submitting the task');
    if (Date.now() > row.deadline_at) return this.fail(row, 'task_timeout', 'the task did not finish in time');
    const route = config.models.get(row.model)?.find((r) => r.channel.id === row.channel);
    const task = route && taskNamed(config, route, row.task);
    if (!route || !task) return this.fail(row, 'channel_unavailable', `model "${row.model}" is no longer served by the channel that runs this task`);
    let answer: unknown;
    let scope: { answer: unknown; task: TaskScope };
    const call = detachedCall(snapshot, this.abort.signal);
    try {
      const polled = await pollOnce(call, task, route, row);
      scope = { answer: (answer = polled.answer), task: polled.scope };
      // The upstream refused in a 2xx answer: "slow down" is polled again after the back-off, anything else fails the task.
      if (polled.refusal?.retry) return this.reschedule(row, {});
      if (polled.refusal) return this.fail(row, polled.refusal.code, sanitizeUpstreamMessage(polled.refusal.message, route));
    } catch (err) {
      if (!isUpstreamTrouble(err)) return this.failOnFault(row, err, 'polling');
      const status = err instanceof GatewayError ? err.upstreamStatus : undefined;
      if (status === 404) {
        const notFound = row.not_found_count + 1;
        if (notFound >= this.options.maxNotFound) return this.fail(row, 'upstream_not_found', 'the upstream no longer knows this task');
        return this.reschedule(row, { not_found_count: notFound });
      }
      // 408, 425, 429, 5xx, timeouts and unreachable upstreams: tried again later (429 no sooner than its retry-after).
      if (status !== undefined && status < 500 && !TOLERATED.has(status)) this.log.warn({ task: row.id, status }, 'a task poll was refused; trying again later');
      const retryAfter = err instanceof GatewayError ? Number(err.headers['retry-after']) * 1000 : NaN;
      return this.reschedule(row, {}, Number.isFinite(retryAfter) ? retryAfter : 0);
    } finally {
      call.dispose();
    }
    let word: unknown;
    let progress: number | undefined;
    let error: { code?: unknown; message?: unknown } = {};
    try {
      word = task.status(scope);
      progress = progressOf(task.progress?.(scope));
      if (task.spec.poll.statusMap[String(word)] === 'failed') error = (task.error?.(scope) ?? {}) as typeof error;
    } catch (err) {
      return this.failOnFault(row, err, 'reading the status answer');
    }
    let status: MappedStatus = task.spec.poll.statusMap[String(word)] ?? 'in_progress';
    if (!Object.hasOwn(task.spec.poll.statusMap, String(word))) {
      this.log.warn({ task: row.id, channel: route.channel.id, status: String(word).slice(0, 64) }, 'unknown upstream task status; kept as in_progress');
      status = 'in_progress';
    }
    if (status === 'failed') {
      // The upstream's reason, bounded and scrubbed of URLs, credentials and the upstream model id like any upstream message.
      return this.fail(row, text(error.code, 'upstream_failed').replace(/[^\w.:-]/g, '_'), sanitizeUpstreamMessage(text(error.message, 'the task failed upstream'), route));
    }
    if (status === 'completed') {
      // The archive may take a while (up to 512 MiB): it runs on, under the renewed lease, while status requests answer.
      return { archiving: this.complete(row, route, task, scope, snapshot) };
    }
    await this.reschedule(row, { status, progress: progress ?? row.progress });
  }

  private async reschedule(row: TaskRow, patch: Partial<TaskRow>, atLeastMs = 0): Promise<void> {
    const route = this.services.config.models.get(row.model)?.find((r) => r.channel.id === row.channel);
    const task = route && taskNamed(this.services.config, route, row.task);
    const delay = task ? pollDelayMs(this.options, task.spec, row.poll_attempts + 1) : this.options.leaseMs;
    await updateLeasedTask(this.services.db, row.id, this.owner, {
      not_found_count: 0,
      ...patch,
      poll_attempts: row.poll_attempts + 1,
      next_poll_at: Date.now() + Math.max(delay, atLeastMs),
    });
  }

  /**
   * Archives the result, settles the charge once from the mapped usage, then marks the task completed. The archive ends by
   * the task's own deadline, every retry of the download included; the reservation is renewed with the lease meanwhile, and
   * one that lapsed anyway is admitted again for what the caps still allow. A result whose bytes could not be obtained and
   * that has no provider URL the client could use instead fails the task: nothing is billed for what nobody can get.
   */
  private async complete(row: TaskRow, route: ModelRoute, task: CompiledTask, polled: { answer: unknown; task: TaskScope }, snapshot: Snapshot): Promise<void> {
    const { leaseMs, archiveMaxBytes } = this.options;
    const reservationMs = 3 * leaseMs;
    const charge = this.services.meter.resume(JSON.parse(row.charge) as ChargeRef);
    const deadline = new Deadline(row.deadline_at - Date.now(), this.abort.signal);
    // The lease is renewed while the result streams; if it is lost anyway (this process stalled), the archive stops and
    // whoever holds the task now finishes it. Renewals of the reservation run one after another.
    let lost = false;
    let renewing: Promise<unknown> = charge.renew(reservationMs).catch(() => undefined);
    const renew = setInterval(() => {
      renewTask(this.services.db, row.id, this.owner, leaseMs).then((held) => held || ((lost = true), deadline.cancel()), () => undefined);
      renewing = renewing.then(() => charge.renew(reservationMs)).catch(() => undefined);
    }, Math.max(50, leaseMs / 3));
    try {
      const family = taskFamilies(snapshot.config.endpoints).get(row.object);
      const archived = await archiveTaskResult(this.services, snapshot, route, task, row, polled, archiveMaxBytes, deadline, family?.purpose ?? `${task.spec.kind}_generation`);
      clearInterval(renew);
      await renewing;
      if (lost) return;
      if (archived.status === 'failed' && this.abort.signal.aborted) {
        // Shutting down mid-archive is not an archive failure: the lease is given back for the next process to finish.
        await updateLeasedTask(this.services.db, row.id, this.owner, {});
        return;
      }
      if (archived.status === 'failed') this.log.warn({ task: row.id, reason: archived.error, attempts: archived.attempts }, 'archiving a task result failed');
      if (archived.status === 'failed' && !archived.providerUrl) {
        return this.fail(row, 'result_unavailable', `the result could not be archived and there is no URL the client may use instead, so nothing is billed: ${archived.error ?? 'unknown reason'}`, charge);
      }
      // The last word on the reservation before settling: still held, or admitted again for what the caps allow.
      await charge.renew(reservationMs);
      const params = JSON.parse(row.params) as TaskParams;
      // Settled before the row says completed: a crash in between is finished by whoever polls next, and the ledger charges once.
      const costMicros = await settleCompletedTask(charge, route, family?.bill, task.usage?.(archived.scope ?? polled), params.size, this.log.child({ task: row.id }));
      await finishLeasedTask(this.services, row.id, this.owner, {
        status: 'completed',
        progress: 100,
        file_id: archived.fileId ?? null,
        archive_status: archived.status,
        provider_url: archived.status === 'failed' ? (archived.providerUrl ?? null) : null,
        error_message: archived.status === 'failed' ? `${archived.error ?? 'archiving failed'}; the result is at provider_url` : null,
        cost_micros: costMicros,
        completed_at: Math.floor(Date.now() / 1000),
      });
    } catch (err) {
      this.log.error({ err, task: row.id }, 'completing a task failed; it is polled again');
      await this.reschedule(row, {}).catch(() => undefined);
    } finally {
      clearInterval(renew);
      deadline.clear();
    }
  }

  /** A fault of the gateway's own (faults.ts): waiting will not mend it, so the task fails now, logged, its charge released. */
  private async failOnFault(row: TaskRow, err: unknown, doing: string): Promise<void> {
    this.log.error({ err, task: row.id }, `${doing} a task failed in the gateway; the task fails and its charge is released`);
    const { code, message } = faultReason(err);
    await this.fail(row, code, message);
  }

  /** Fails the task: its charge is released (nothing billed), the reason kept. */
  private async fail(row: TaskRow, code: string, message: string, charge = this.services.meter.resume(JSON.parse(row.charge) as ChargeRef)): Promise<void> {
    await charge.release();
    await finishLeasedTask(this.services, row.id, this.owner, {
      status: 'failed',
      error_code: code.slice(0, 100),
      error_message: message.slice(0, MAX_TEXT),
      completed_at: Math.floor(Date.now() / 1000),
    });
  }
}
