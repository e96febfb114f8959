// A task's submit or status answer: JSON read within a bound, never buffered whole.
import { readCapped } from '../net/read-capped.js';
import { upstreamMalformed } from '../pipeline/usage.js';

/** The most a submit or status answer may be (a base64 image result fits; a video travels by URL or download). */
const ANSWER_LIMIT = 32 * 1024 * 1024;

/** A JSON answer read within ANSWER_LIMIT: a larger or unparsable one is a malformed answer, never buffered whole. */
export async function readAnswer(body: AsyncIterable<unknown> & { destroy(): void }, channel: string): Promise<unknown> {
  const bytes = await readCapped(body, ANSWER_LIMIT, () => upstreamMalformed(channel, `its answer is over ${ANSWER_LIMIT} bytes`));
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw upstreamMalformed(channel, 'its body is not JSON');
  }
}
