// The decode stage: what the upstream answered, checked against what the operation declared (a JSON object, or an event stream).
import { GatewayError } from '../base/errors.js';
import { upstreamTransportError } from '../engine/upstream.js';
import { deadlineError, type Sent } from './send.js';
import { upstreamMalformed } from './usage.js';
import { keepSourceText } from '../http/json-text.js';
import { hasFraming, isStreamContentType } from './framing.js';
import { readCapped } from '../net/read-capped.js';


/** Turns a failure while reading an upstream body into the gateway's error: timeout, deadline, malformed or unreachable. */
export function readFailure(err: unknown, sent: Sent): Error {
  if (sent.timedOut()) return deadlineError(sent.route);
  if (err instanceof GatewayError) return err;
  if (err instanceof SyntaxError) return upstreamMalformed(sent.route.channel.id, 'its body is not JSON');
  return upstreamTransportError(err, sent.route.channel.id);
}

/** The answer's text, read while it arrives and refused once it passes the configured limit (never buffered whole). */
export async function readBounded(sent: Sent): Promise<string> {
  const limit = sent.answerLimit;
  const declared = Number(sent.response.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    sent.response.body.destroy();
    throw upstreamMalformed(sent.route.channel.id, `its answer is over the ${limit}-byte limit`);
  }
  const tooLarge = () => upstreamMalformed(sent.route.channel.id, `its answer is over the ${limit}-byte limit`);
  // A channel's answer joins its own chunks (no stream made); any other response is read as its stream.
  if (sent.response.readText) return sent.response.readText(limit, tooLarge);
  return (await readCapped(sent.response.body, limit, tooLarge)).toString('utf8');
}

/** The upstream's JSON answer, which must be an object (an array or a scalar is malformed, never passed on reshaped). */
export async function readJsonObject(sent: Sent): Promise<Record<string, unknown>> {
  if (isStreamContentType(sent.response.headers['content-type'])) {
    await sent.response.body.dump().catch(() => undefined);
    throw upstreamMalformed(sent.route.channel.id, 'it answered an event stream where JSON was expected');
  }
  let answer: unknown;
  let text: string;
  try {
    text = await readBounded(sent);
    answer = JSON.parse(text);
  } catch (err) {
    throw readFailure(err, sent);
  }
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) throw upstreamMalformed(sent.route.channel.id, `its answer is ${Array.isArray(answer) ? 'an array' : 'not a JSON object'}`);
  // The text is kept beside the answer: a pass-through relays the upstream's own bytes (numbers keep their digits).
  keepSourceText(answer, text);
  return answer as Record<string, unknown>;
}

/** Checks a streamed answer is one, framed as its operation declares, before anything is sent to the client. */
export async function expectEventStream(sent: Sent): Promise<void> {
  if (hasFraming(sent)) return;
  await sent.response.body.dump().catch(() => undefined);
  throw upstreamMalformed(sent.route.channel.id, isStreamContentType(sent.response.headers['content-type']) ? 'it answered a stream in another framing than its protocol declares' : 'it answered plain JSON where an event stream was asked for');
}
