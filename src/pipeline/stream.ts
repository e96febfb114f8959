// Relays an upstream event stream to the client event by event, reading usage as it passes; the response always ends.
import { GatewayError, internalError, UpstreamError } from '../base/errors.js';
import { SseWriter, type SseEvent } from '../engine/sse.js';
import type { StreamMapper } from '../engine/translator.js';
import type { Charge } from '../billing/meter.js';
import type { Call, ClientStream } from './call.js';
import { readFailure } from './decode.js';
import { deadlineError, type Sent } from './send.js';
import { answerBeforeCommit, exceedsReservation, settleFromUsage } from './settle.js';
import type { UsageReader } from './usage.js';
import { upstreamMalformed } from './usage.js';
import { archiveOutputs, type ArchivedResult } from './outputs.js';
import { recordResponseId } from './provider-ids.js';
import { eventReaderFor } from './framing.js';

/** The event being relayed, its data parsed at most once, whoever asks first (the usage reader or the mapper); one per stream. */
class CurrentEvent {
  private event!: SseEvent;
  private parsed = false;
  private value: unknown;
  /** Handed to the usage reader and the mapper: made once per stream, not per event. */
  readonly parse = (): unknown => this.read();

  constructor(private readonly channel: string) {}

  set(event: SseEvent, value?: unknown): void {
    this.event = event;
    this.parsed = value !== undefined;
    this.value = value;
  }

  private read(): unknown {
    if (!this.parsed) {
      try {
        this.value = JSON.parse(this.event.data);
      } catch {
        throw upstreamMalformed(this.channel, 'a stream event is not JSON');
      }
      this.parsed = true;
    }
    return this.value;
  }
}

/**
 * The body's chunks, read on while `ready` is pending and handed on once it settles: a mapper that needs a count for its
 * first event waits for it without leaving the upstream unread (an upstream that resets the connection takes with it
 * whatever was left unread in the socket's buffer).
 */
export async function* readAhead(body: AsyncIterable<Buffer>, ready: Promise<unknown>): AsyncGenerator<Buffer> {
  const chunks = body[Symbol.asyncIterator]();
  const settled = ready.then(
    () => undefined,
    () => undefined,
  );
  const early: Buffer[] = [];
  let next: Promise<IteratorResult<Buffer>> | undefined;
  let ended = false;
  let failure: { err: unknown } | undefined;
  try {
    try {
      while (!ended) {
        next ??= chunks.next();
        const read = await Promise.race([next, settled]);
        if (!read) break;
        next = undefined;
        if (read.done) ended = true;
        else early.push(read.value);
      }
    } catch (err) {
      failure = { err };
      next = undefined;
    }
    await settled;
    yield* early;
    if (failure) throw failure.err;
    while (!ended) {
      const read = await (next ?? chunks.next());
      next = undefined;
      if (read.done) ended = true;
      else yield read.value;
    }
  } finally {
    // A consumer that stops early ends the body, as leaving a for-await loop over it does.
    next?.catch(() => undefined);
    if (!ended && !failure) await chunks.return?.();
  }
}

/** One upstream stream relayed to the client: the first, or one that continues it on another target. */
export interface StreamAttempt {
  sent: Sent;
  mapper: StreamMapper;
  usage: UsageReader;
}

/** A stream broken after its first byte may go on elsewhere (a route's failover.streamAfterFirstByte, docs/routing.md). */
export interface StreamFailover {
  /** No byte for this long breaks the stream (failover.streamIdleMs). */
  readonly idleMs: number;
  /** The mapper the first attempt relays through (recording what the client is sent). */
  wrap(mapper: StreamMapper): StreamMapper;
  /** `attempt` broke with `err`: the attempt that continues it, or undefined to end the stream with the error. */
  next(err: unknown, attempt: StreamAttempt): Promise<StreamAttempt | undefined>;
  /** Settles the charge over every attempt relayed. */
  settle(attempts: readonly StreamAttempt[]): Promise<void>;
}

/**
 * `ready`: what the mapper waits for before its first event (the body is read meanwhile, see readAhead). A stream the
 * call's guardrails watch passes through their window (call.guardStream).
 */
export async function relayStream(call: Call, sent: Sent, relayed: StreamMapper, usage: UsageReader, charge: Charge, ready?: Promise<unknown>, failover?: StreamFailover): Promise<void> {
  const mapper = call.guardStream?.(relayed) ?? relayed;
  // The head goes out with the first events when the upstream's first bytes are already here, else on its own now.
  const res = call.openStream(
    { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': call.requestId },
    (sent.response.bufferedBytes ?? sent.response.body.readableLength) === 0,
  );
  const out = new SseWriter(res);
  const attempts: StreamAttempt[] = [{ sent, mapper: failover ? failover.wrap(mapper) : mapper, usage }];
  try {
    for (let attempt = attempts[0]; ; ) {
      try {
        await pump(call, attempt, out, attempt === attempts[0] ? ready : undefined, failover?.idleMs);
        break;
      } catch (err) {
        cancelAnswer(attempt.sent);
        // The upstream's failure (not the client leaving, the deadline, or a guardrail's block): its target failed, and
        // the answer may go on elsewhere.
        const broke = !call.clientGone && !call.abortSource.aborted && upstreamFailure(err, attempt.sent);
        if (broke) call.upstreams.answerBroke(attempt.sent.route);
        const next = failover && broke ? await continuation(call, failover, err, attempt) : undefined;
        if (next) {
          // The continuation's text passes the call's guardrails as the first attempt's did (a window of its own).
          attempts.push((attempt = call.guardStream ? { ...next, mapper: call.guardStream(next.mapper) } : next));
          continue;
        }
        if (!call.clientGone) {
          const failure = readFailure(err, attempt.sent);
          const error = failure instanceof GatewayError ? failure : internalError(failure);
          call.log.warn({ err, channel: attempt.sent.route.channel.id }, 'upstream stream failed');
          // Written with the end of the response, below.
          out.add(attempt.mapper.fail(error));
        }
        break;
      }
    }
  } finally {
    await endStream(call, attempts, charge, out, res, failover);
  }
}

/** Whether what broke a stream is the upstream's doing (its connection, its events, its silence), not the gateway's. */
function upstreamFailure(err: unknown, sent: Sent): boolean {
  const failure = readFailure(err, sent);
  return failure instanceof GatewayError && failure.statusCode >= 500;
}

/** The attempt that continues a broken stream; undefined (logged) when none can. */
async function continuation(call: Call, failover: StreamFailover, err: unknown, attempt: StreamAttempt): Promise<StreamAttempt | undefined> {
  try {
    return await failover.next(err, attempt);
  } catch (failure) {
    call.log.warn({ err: failure, channel: attempt.sent.route.channel.id }, 'a broken stream could not be continued on another target');
    return undefined;
  }
}

/** Relays one attempt's events until its upstream ends (its closing events added), or throws what broke it. */
async function pump(call: Call, attempt: StreamAttempt, out: SseWriter, ready: Promise<unknown> | undefined, idleMs: number | undefined): Promise<void> {
  const { sent, mapper, usage } = attempt;
  const reader = eventReaderFor(sent, call.upstreams.errorMessage(sent.route, sent.operationName));
  const current = new CurrentEvent(sent.route.channel.id);
  const media = sent.operation.outputs?.events;
  // Items archived so far in this stream, by id: the final event's copy of an item gets the same fields.
  const archived = media ? new Map<string, ArchivedResult>() : undefined;
  const relay = async (events: SseEvent[]) => {
    for (let event of events) {
      if (call.abortSource.aborted) return;
      const archive = media?.[event.event ?? 'message'];
      current.set(event);
      if (archive) {
        // outputs: an event carrying media (a generated image) goes on with its archive fields added.
        const data = current.parse();
        await archiveOutputs(call, archive, data, archived);
        event = { event: event.event, data: JSON.stringify(data) };
        current.set(event, data);
      }
      // A Responses stream names its response first: recorded for this workspace before the client sees the id.
      if (event.event === 'response.created' && call.dialect === 'openai-responses') await recordResponseId(call, (current.parse() as { response?: unknown }).response);
      usage.fromEvent(event, current.parse);
      // Counts are checked as they arrive: a malformed count ends the stream here, not after it.
      usage.counts();
      const kept = addDrained(out, mapper, mapper.push(event, current.parse));
      if (kept) await kept;
    }
    // The events of one upstream chunk go out in one write.
    await out.flush();
  };
  for await (const chunk of chunksOf(sent, ready, idleMs)) {
    if (call.abortSource.aborted) break;
    await relay(reader.feed(chunk));
  }
  if (!call.abortSource.aborted) await relay(reader.end());
  if (call.timedOut) throw deadlineError(sent.route);
  // The closing events go out with the end of the response (below), in one write.
  if (!call.clientGone) await addDrained(out, mapper, mapper.end());
}

const idleError = (sent: Sent, idleMs: number) => () => new UpstreamError(`channel "${sent.route.channel.id}" sent no byte of its stream for ${idleMs} ms`, 504, 'upstream_timeout');

/**
 * The answer's chunks, held back until `ready` settles (read meanwhile) and broken off with an upstream_timeout when none
 * comes for `idleMs`: a channel's answer does both itself (its chunks straight from the call, no stream); any other
 * response's body stream goes through readAhead and idleBounded.
 */
function chunksOf(sent: Sent, ready: Promise<unknown> | undefined, idleMs: number | undefined): AsyncIterable<Buffer> {
  const response = sent.response;
  if (response.chunks) return response.chunks({ readAheadUntil: ready, idleMs, idleError: idleMs === undefined ? undefined : idleError(sent, idleMs) });
  const source = ready ? readAhead(response.body, ready) : response.body;
  return idleMs === undefined ? source : idleBounded(source, idleMs, sent);
}

/** Stops an answer nobody reads on (its call aborted unless it ended). */
function cancelAnswer(sent: Sent): void {
  if (sent.response.cancel) sent.response.cancel();
  else sent.response.body.destroy();
}

/** The chunks of `body`, broken off with an upstream_timeout when none comes for `idleMs` (one timer, refreshed). */
async function* idleBounded(body: AsyncIterable<Buffer>, idleMs: number, sent: Sent): AsyncGenerator<Buffer> {
  const chunks = body[Symbol.asyncIterator]();
  let fire: (err: unknown) => void = () => undefined;
  const timeout = idleError(sent, idleMs);
  const timer = setTimeout(() => fire(timeout()), idleMs);
  let ended = false;
  try {
    for (;;) {
      const idle = new Promise<never>((_, reject) => (fire = reject));
      const next = chunks.next();
      timer.refresh();
      const read = await Promise.race([next, idle]).catch((err: unknown) => {
        next.catch(() => undefined);
        throw err;
      });
      if (read.done) {
        ended = true;
        return;
      }
      yield read.value;
    }
  } finally {
    clearTimeout(timer);
    // A consumer that stops early ends the body, as leaving a for-await loop over it does (a broken one is destroyed).
    if (!ended) void chunks.return?.()?.catch(() => undefined);
  }
}

/** Adds a mapper's events; what they record (a translated response's items) is to be kept before the client sees them. */
function addDrained(out: SseWriter, mapper: StreamMapper, events: SseEvent[]): Promise<void> | undefined {
  out.add(events);
  return mapper.drain?.();
}

/**
 * Settles and ends the response. The settlement is queued before the response ends (so it is committed before anything
 * can read the ledger after the stream), and nothing in it may keep the response from ending; on a store that batches
 * commits, the relay does not wait for the commit.
 */
async function endStream(call: Call, attempts: readonly StreamAttempt[], charge: Charge, out: SseWriter, res: ClientStream, failover: StreamFailover | undefined): Promise<void> {
  const { log } = call;
  const { sent, usage, mapper } = attempts[attempts.length - 1];
  const settle = attempts.length > 1 ? failover!.settle(attempts) : settleFromUsage(charge, sent.route, usage, log, mapper.streamedOutputTokens?.());
  const settling = settle.catch((err: unknown) => log.error({ err }, 'settling a stream failed'));
  // An overage is booked before the stream ends: the reservation no longer holds the cap for it.
  if (!answerBeforeCommit(call) || attempts.length > 1 || exceedsReservation(charge, sent.route, usage)) await settling;
  if (!res.writableEnded) out.end();
  // The answer is complete: the runtime snapshot may go while the settlement commits, and the call with it (the charge
  // ended when its settlement was queued; `settling` logs a failure itself), so nothing here waits for the commit.
  call.dispose();
}
