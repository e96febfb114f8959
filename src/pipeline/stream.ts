// Relays an upstream event stream to the client event by event, reading usage as it passes; the response always ends.
import type { ServerResponse } from 'node:http';
import { GatewayError, internalError } from '../errors.js';
import { readSse, sseFrame, writeFrames, type SseEvent } from '../engine/sse.js';
import type { StreamMapper } from '../engine/translator.js';
import type { Charge } from '../billing/meter.js';
import type { Call } from './call.js';
import { readFailure } from './decode.js';
import { deadlineError, type Sent } from './send.js';
import { answerBeforeCommit, settleFromUsage } from './settle.js';
import type { UsageReader } from './usage.js';
import { upstreamMalformed } from './usage.js';
import { archiveOutputs, type ArchivedResult } from './outputs.js';
import { recordResponseId } from './provider-ids.js';

/** Parses an event's data at most once, whoever asks first (the usage reader or the mapper). */
function parserFor(event: SseEvent, channel: string): () => unknown {
  let parsed: { value: unknown } | undefined;
  return () => {
    if (!parsed) {
      try {
        parsed = { value: JSON.parse(event.data) };
      } catch {
        throw upstreamMalformed(channel, 'a stream event is not JSON');
      }
    }
    return parsed.value;
  };
}

/**
 * Events that arrive together go out in one write: the response is corked while they are mapped and uncorked when
 * this turn of the event loop ends, so a burst costs one syscall instead of one an event, and a lone event waits no longer.
 */
function coalesceWrites(res: ServerResponse): void {
  if (res.writableCorked) return;
  res.cork();
  setImmediate(uncork, res);
}

function uncork(res: ServerResponse): void {
  while (res.writableCorked) res.uncork();
}

export async function relayStream(call: Call, sent: Sent, mapper: StreamMapper, usage: UsageReader, charge: Charge): Promise<void> {
  const { reply, req } = call;
  const channel = sent.route.channel.id;
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': req.id,
  });
  res.flushHeaders();
  try {
    const media = sent.operation.outputs?.events;
    // Items archived so far in this stream, by id: the final event's copy of an item gets the same fields.
    const archived = media ? new Map<string, ArchivedResult>() : undefined;
    for await (let event of readSse(sent.response.body)) {
      if (call.signal.aborted) break;
      let parse = parserFor(event, channel);
      const archive = media?.[event.event ?? 'message'];
      if (archive) {
        // outputs: an event carrying media (a generated image) goes on with its archive fields added.
        const data = parse();
        await archiveOutputs(call, archive, data, archived);
        event = { event: event.event, data: JSON.stringify(data) };
        parse = () => data;
      }
      // A Responses stream names its response first: recorded for this workspace before the client sees the id.
      if (event.event === 'response.created' && call.dialect === 'openai-responses') await recordResponseId(call, (parse() as { response?: unknown }).response);
      usage.fromEvent(event, parse);
      // Counts are checked as they arrive: a malformed count ends the stream here, not after it.
      usage.counts();
      coalesceWrites(res);
      await writeFrames(res, mapper.push(event, parse).map(sseFrame));
    }
    if (call.timedOut) throw deadlineError(sent.route);
    if (!call.clientGone) await writeFrames(res, mapper.end().map(sseFrame));
  } catch (err) {
    if (!call.clientGone) {
      const failure = readFailure(err, sent);
      const error = failure instanceof GatewayError ? failure : internalError(failure);
      req.log.warn({ err, channel }, 'upstream stream failed');
      await writeFrames(res, mapper.fail(error).map(sseFrame)).catch(() => undefined);
    }
    sent.response.body.destroy();
  } finally {
    // The settlement is queued before the response ends (so it is committed before anything can read the ledger after
    // the stream), and nothing in it may keep the response from ending.
    const settling = settleFromUsage(charge, sent.route, usage, req.log).catch((err: unknown) => req.log.error({ err }, 'settling a stream failed'));
    if (!answerBeforeCommit(call)) await settling;
    uncork(res);
    if (!res.writableEnded) res.end();
    // The answer is complete: the runtime snapshot may go while the settlement commits.
    call.dispose();
    await settling;
  }
}
