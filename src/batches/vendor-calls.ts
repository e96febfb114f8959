// The calls of a vendor's batch API: each one operation of the channel's protocol, sent through the pipeline's send stage
// (the channel's credential, circuit and deadline) with no client, and its answer read as JSON or as JSON lines.
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { detachedCall } from '../pipeline/core.js';
import { send, type Outgoing, type Sent } from '../pipeline/send.js';
import { upstreamMalformed } from '../pipeline/usage.js';

/** Sends one vendor call on `route` and reads its answer with `read` before the call ends. Upstream errors throw. */
export async function callVendor<T>(snapshot: Snapshot, signal: AbortSignal, route: ModelRoute, outgoing: Outgoing, read: (sent: Sent) => Promise<T>): Promise<T> {
  const call = detachedCall(snapshot, signal);
  try {
    return await read(await send(call, [route], () => outgoing));
  } finally {
    call.dispose();
  }
}

/**
 * The JSON lines of an answer, each parsed, read as they arrive (a results file of 50,000 answers is never held whole);
 * a line longer than the answer limit is refused as malformed.
 */
export async function* jsonLinesOf(sent: Sent): AsyncGenerator<unknown> {
  const limit = sent.answerLimit;
  const tooLong = () => upstreamMalformed(sent.route.channel.id, `a line of its batch results is over the ${limit}-byte limit`);
  let pending: Buffer[] = [];
  let size = 0;
  for await (const chunk of sent.response.body as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; start = end + 1, end = chunk.indexOf(0x0a, start)) {
      if (size + end - start > limit) throw tooLong();
      const line = Buffer.concat([...pending, chunk.subarray(start, end)]);
      pending = [];
      size = 0;
      const parsed = parsedLine(line, sent);
      if (parsed !== undefined) yield parsed;
    }
    size += chunk.length - start;
    if (size > limit) throw tooLong();
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  const last = parsedLine(Buffer.concat(pending), sent);
  if (last !== undefined) yield last;
}

function parsedLine(line: Buffer, sent: Sent): unknown {
  const text = line.toString('utf8').trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw upstreamMalformed(sent.route.channel.id, 'a line of its batch results is not JSON');
  }
}
