// Relays an upstream event stream to the client event by event, reading usage as it passes; the response always ends.
import { GatewayError, internalError } from '../base/errors.js';
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

/** `ready`: what the mapper waits for before its first event (the body is read meanwhile, see readAhead). A stream the call's guardrails watch passes through their window (call.guardStream). */
export async function relayStream(call: Call, sent: Sent, relayed: StreamMapper, usage: UsageReader, charge: Charge, ready?: Promise<unknown>): Promise<void> {
  const mapper = call.guardStream?.(relayed) ?? relayed;
  const channel = sent.route.channel.id;
  const body = sent.response.body;
  // The head goes out with the first events when the upstream's first bytes are already here, else on its own now.
  const res = call.openStream(
    { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': call.requestId },
    body.readableLength === 0,
  );
  const reader = eventReaderFor(sent, call.upstreams.errorMessage(sent.route, sent.operationName));
  const out = new SseWriter(res);
  const current = new CurrentEvent(channel);
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
  try {
    for await (const chunk of ready ? readAhead(body, ready) : body) {
      if (call.abortSource.aborted) break;
      await relay(reader.feed(chunk));
    }
    if (!call.abortSource.aborted) await relay(reader.end());
    if (call.timedOut) throw deadlineError(sent.route);
    // The closing events go out with the end of the response (below), in one write.
    if (!call.clientGone) await addDrained(out, mapper, mapper.end());
  } catch (err) {
    if (!call.clientGone) {
      const failure = readFailure(err, sent);
      const error = failure instanceof GatewayError ? failure : internalError(failure);
      call.log.warn({ err, channel }, 'upstream stream failed');
      // Written with the end of the response, below.
      out.add(mapper.fail(error));
    }
    body.destroy();
  } finally {
    await endStream(call, sent, usage, charge, out, res, mapper.streamedOutputTokens?.());
  }
}

/** Adds a mapper's events; what they record (a translated response's items) is to be kept before the client sees them. */
function addDrained(out: SseWriter, mapper: StreamMapper, events: SseEvent[]): Promise<void> | undefined {
  out.add(events);
  return mapper.drain?.();
}

/**
 * Settles and ends the response. The settlement is queued before the response ends (so it is committed before anything
 * can read the ledger after the stream), and nothing in it may keep the response from ending.
 */
async function endStream(call: Call, sent: Sent, usage: UsageReader, charge: Charge, out: SseWriter, res: ClientStream, streamedOutput?: number): Promise<void> {
  const { log } = call;
  const settling = settleFromUsage(charge, sent.route, usage, log, streamedOutput).catch((err: unknown) => log.error({ err }, 'settling a stream failed'));
  // An overage is booked before the stream ends: the reservation no longer holds the cap for it.
  if (!answerBeforeCommit(call) || exceedsReservation(charge, sent.route, usage)) await settling;
  if (!res.writableEnded) out.end();
  // The answer is complete: the runtime snapshot may go while the settlement commits.
  call.dispose();
  await settling;
}
