// AWS event streams (`application/vnd.amazon.eventstream`, the framing of Bedrock's ConverseStream): binary frames split
// out of the upstream's chunks and decoded, CRCs checked, into the same events an SSE stream gives the relay.
// Frame layout: https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream and
// https://smithy.io/2.0/aws/amazon-eventstream.html (prelude: total length, headers length, prelude CRC; headers;
// payload; message CRC, all big-endian CRC32).
import type { EventStreamCodec, Message, MessageHeaders } from '@smithy/eventstream-codec';
import { requireOnUse } from '../base/load-on-use.js';
import type { SseEvent } from './sse.js';

/** What the reader cannot make an event of: a frame that breaks the format, or one that reports the upstream's failure. */
export interface EventStreamFaults {
  /** A frame that is not one (bad length, failed CRC, a stream cut inside a frame): the upstream's answer is malformed. */
  malformed(detail: string): Error;
  /** An exception frame (`:message-type: exception`, `:exception-type`) or an error frame: the upstream failed mid-stream. */
  exception(type: string, payload: string): Error;
}

/** The prelude (12 bytes) and the message CRC (4): the smallest frame there is. */
const FRAME_OVERHEAD = 16;
/** The format's own bound on one frame (Smithy's event-stream specification): 16 MiB. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

const smithyCodec = requireOnUse<{ EventStreamCodec: typeof EventStreamCodec }>('@smithy/eventstream-codec', 'an AWS event stream');
const smithyUtf8 = requireOnUse<Utf8>('@smithy/util-utf8', 'an AWS event stream');

interface Utf8 {
  fromUtf8(text: string): Uint8Array;
  toUtf8(bytes: Uint8Array | string): string;
}

let made: ({ codec: EventStreamCodec } & Utf8) | undefined;
/** smithy's codec and its text conversions (with @smithy/core, about 1 MiB of heap), made with the first event stream read or written. */
function smithy(): { codec: EventStreamCodec } & Utf8 {
  if (!made) {
    const { fromUtf8, toUtf8 } = smithyUtf8();
    made = { codec: new (smithyCodec().EventStreamCodec)(toUtf8, fromUtf8), fromUtf8, toUtf8 };
  }
  return made;
}

const headerText = (headers: MessageHeaders, name: string): string | undefined => {
  const header = headers[name];
  return header?.type === 'string' ? header.value : undefined;
};

/**
 * Splits an event-stream byte stream into frames one chunk at a time and decodes each with @smithy/eventstream-codec,
 * which checks both CRCs. The codec decodes whole frames only; its own chunker (getChunkedStream) is a pull iterator
 * that allocates whatever length a prelude claims, so frames are cut here, bounded, from a push-fed buffer.
 *
 * An event frame becomes `{event: <:event-type>, data: <payload as UTF-8>}`: the usage reader and the stream mappings
 * read it exactly as they read an SSE event's data.
 */
export class EventStreamReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** A failure met after events of the same chunk: those go out first, the failure at the next read. */
  private failure: Error | undefined;

  constructor(
    private readonly faults: EventStreamFaults,
    private readonly maxFrameBytes = MAX_FRAME_BYTES,
  ) {}

  feed(chunk: Buffer | string): SseEvent[] {
    if (this.failure) throw this.failure;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length) {
      this.pending.push(bytes);
      this.pendingBytes += bytes.length;
    }
    let events: SseEvent[] | undefined;
    try {
      for (let frame = this.nextFrame(); frame; frame = this.nextFrame()) {
        const event = this.decode(frame);
        if (event) (events ??= []).push(event);
      }
    } catch (err) {
      // The events before the failure are the upstream's answer so far: relayed, then the failure.
      if (!events) throw err;
      this.failure = err as Error;
    }
    return events ?? noEvents;
  }

  /** The body ended: a frame left half-read means the stream was cut inside it. */
  end(): SseEvent[] {
    if (this.failure) throw this.failure;
    if (this.pendingBytes > 0) throw this.faults.malformed(`its event stream ended inside a frame (${this.pendingBytes} bytes left over)`);
    return noEvents;
  }

  /** The next whole frame, taken off the buffer; undefined until its last byte has arrived. */
  private nextFrame(): Buffer | undefined {
    if (this.pendingBytes < 4) return undefined;
    const head = this.pending[0].length >= 4 ? this.pending[0] : (this.pending = [Buffer.concat(this.pending)])[0];
    const length = head.readUInt32BE(0);
    if (length < FRAME_OVERHEAD || length > this.maxFrameBytes) throw this.faults.malformed(`an event-stream frame says it is ${length} bytes long (at least ${FRAME_OVERHEAD}, at most ${this.maxFrameBytes})`);
    if (this.pendingBytes < length) return undefined;
    const all = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    const frame = all.subarray(0, length);
    const rest = all.subarray(length);
    this.pending = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
    return frame;
  }

  private decode(frame: Buffer): SseEvent | undefined {
    let message: Message;
    try {
      message = smithy().codec.decode(frame);
    } catch (err) {
      // The codec says which check failed (prelude CRC, message CRC, lengths): the frame is not what the upstream sent.
      throw this.faults.malformed(`an event-stream frame is corrupt (${(err as Error).message})`);
    }
    const payload = smithy().toUtf8(message.body);
    const kind = headerText(message.headers, ':message-type');
    if (kind === 'exception') throw this.faults.exception(headerText(message.headers, ':exception-type') ?? 'exception', payload);
    // An error frame names its code and message in headers (the format's own failure, not the service's).
    if (kind === 'error') throw this.faults.exception(headerText(message.headers, ':error-code') ?? 'error', JSON.stringify({ message: headerText(message.headers, ':error-message') ?? '' }));
    const name = headerText(message.headers, ':event-type');
    // A frame with no event type (an initial-response with nothing in it) carries nothing a mapping reads.
    if (kind !== 'event' || !name) return undefined;
    return { event: name, data: payload };
  }
}

const noEvents: SseEvent[] = [];

/** One event frame, encoded (the test fakes and unit tests speak the format through the same codec). */
export function encodeEventFrame(eventType: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  const typeHeader = messageType === 'exception' ? ':exception-type' : ':event-type';
  const { codec, fromUtf8 } = smithy();
  return codec.encode({
    headers: {
      [typeHeader]: { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: messageType },
    },
    body: fromUtf8(typeof payload === 'string' ? payload : JSON.stringify(payload)),
  });
}
