// The AWS event-stream framing (src/engine/event-stream.ts) on frames from AWS's own reference: the binary vectors of
// botocore's event-stream tests (tests/unit/test_eventstream.py in boto/botocore, AWS's Python SDK), and frames built
// as Bedrock's ConverseStream sends them. Frames split anywhere across chunks, bad CRCs, bad lengths and cut streams.
import { describe, expect, it } from 'vitest';
import { GatewayError, UpstreamError } from '../src/base/errors.js';
import { encodeEventFrame, EventStreamReader } from '../src/engine/event-stream.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');

/** botocore's `test_event_stream_initial_response`: one event frame, sent in three chunks (AWS's own split). */
const INITIAL_RESPONSE = [
  bytes('\x00\x00\x00~\x00\x00\x00O\xc5\xa3\xdd\xc6\r:message-type\x07\x00'),
  bytes('\x05event\x0b:event-type\x07\x00\x10initial-response\r:content-type'),
  bytes('\x07\x00\ttext/json{"InitialResponse": "sometext"}\xf6\x98$\x83'),
];
/** botocore's ERROR_EVENT_MESSAGE: `:message-type: error` with `:error-code` and `:error-message` headers. */
const ERROR_FRAME = bytes(
  '\x00\x00\x00\x52\x00\x00\x00\x42\xbf\x23\x63\x7e\x0d:message-type\x07\x00\x05error\x0b:error-code\x07\x00\x04code\x0e:error-message\x07\x00\x07message\x6b\x6c\xea\x3d',
);
/** botocore's PAYLOAD_ONE_STR_HEADER: a valid frame with no message type (nothing a mapping reads). */
const NO_TYPE_FRAME = bytes("\x00\x00\x00=\x00\x00\x00 \x07\xfd\x83\x96\x0ccontent-type\x07\x00\x10application/json{'foo':'bar'}\x8d\x9c\x08\xb1");
/** botocore's CORRUPTED_PAYLOAD (the payload's last byte changed: the message CRC fails) and CORRUPTED_HEADERS (a header byte changed). */
const BAD_PAYLOAD_CRC = bytes("\x00\x00\x00\x1d\x00\x00\x00\x00\xfdR\x8cZ{'foo':'bar'\x8d\xc3e96");
const BAD_HEADER_CRC = bytes("\x00\x00\x00=\x00\x00\x00 \x07\xfd\x83\x96\x0ccontent+type\x07\x00\x10application/json{'foo':'bar'}\x8d\x9c\x08\xb1");
/** botocore's CORRUPTED_LENGTH: the prelude claims 16 MiB and more. */
const BAD_LENGTH = bytes("\x01\x00\x00\x1d\x00\x00\x00\x00\xfdR\x8cZ{'foo':'bar'}\xc3e96");

const faults = {
  malformed: (detail: string) => new GatewayError('upstream_malformed', 502, 'upstream_error', detail),
  exception: (type: string, payload: string) => new UpstreamError(`${type}: ${payload}`),
};

/** Every event the reader gives for `chunks`, fed one by one, then the end. */
function read(chunks: Uint8Array[]) {
  const reader = new EventStreamReader(faults);
  const events = chunks.flatMap((c) => reader.feed(Buffer.from(c)));
  return [...events, ...reader.end()];
}

/** `frames` concatenated and cut into pieces of `size` bytes. */
function cut(frames: Uint8Array[], size: number): Buffer[] {
  const all = Buffer.concat(frames);
  const pieces: Buffer[] = [];
  for (let i = 0; i < all.length; i += size) pieces.push(all.subarray(i, i + size));
  return pieces;
}

describe('AWS event-stream frames', () => {
  it("decodes AWS's reference event frame sent in three chunks into one event named by :event-type", () => {
    expect(read(INITIAL_RESPONSE)).toEqual([{ event: 'initial-response', data: '{"InitialResponse": "sometext"}' }]);
  });

  it('decodes the same frame fed one byte at a time, and two frames arriving in one chunk', () => {
    expect(read(cut(INITIAL_RESPONSE, 1))).toEqual([{ event: 'initial-response', data: '{"InitialResponse": "sometext"}' }]);
    const frame = Buffer.concat(INITIAL_RESPONSE);
    expect(read([Buffer.concat([frame, frame])])).toHaveLength(2);
  });

  it('reads ConverseStream events split at every chunk size, in order, the payload as UTF-8 text', () => {
    const frames = [
      encodeEventFrame('messageStart', { p: 'abcd', role: 'assistant' }),
      encodeEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Grüße, 世界' } }),
      encodeEventFrame('messageStop', { stopReason: 'end_turn' }),
      encodeEventFrame('metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 10 } }),
    ];
    for (const size of [1, 2, 3, 7, 16, 64, 1000]) {
      const events = read(cut(frames, size));
      expect(events.map((e) => e.event), `chunks of ${size}`).toEqual(['messageStart', 'contentBlockDelta', 'messageStop', 'metadata']);
      expect(JSON.parse(events[1].data).delta.text).toBe('Grüße, 世界');
    }
  });

  it('skips a valid frame without a message type (nothing for a mapping to read)', () => {
    expect(read([NO_TYPE_FRAME])).toEqual([]);
  });

  it('refuses a frame whose message CRC fails, and one whose headers were changed, as a malformed upstream', () => {
    for (const frame of [BAD_PAYLOAD_CRC, BAD_HEADER_CRC]) {
      const error = (() => {
        try {
          read(cut([frame], 5));
        } catch (err) {
          return err as GatewayError;
        }
      })();
      expect(error).toBeInstanceOf(GatewayError);
      expect(error!.code).toBe('upstream_malformed');
      expect(error!.message).toMatch(/frame is corrupt \(.*(checksum|CRC)/i);
    }
  });

  it('refuses a frame that claims more than 16 MiB before reading it', () => {
    const reader = new EventStreamReader(faults);
    expect(() => reader.feed(BAD_LENGTH.subarray(0, 4))).toThrow(/says it is 16777245 bytes long/);
  });

  it('refuses a stream cut inside a frame at its end', () => {
    const frame = Buffer.concat(INITIAL_RESPONSE);
    const reader = new EventStreamReader(faults);
    expect(reader.feed(frame.subarray(0, 40))).toEqual([]);
    expect(() => reader.end()).toThrow(/ended inside a frame \(40 bytes left over\)/);
  });

  it("turns AWS's reference error frame into the upstream's failure, with its code and message", () => {
    expect(() => read([ERROR_FRAME])).toThrow(new UpstreamError('code: {"message":"message"}'));
  });

  it('gives the events before an exception frame of the same chunk first, then the failure at the next read', () => {
    const reader = new EventStreamReader(faults);
    const chunk = Buffer.concat([encodeEventFrame('messageStart', { role: 'assistant' }), encodeEventFrame('throttlingException', { message: 'Slow down.' }, 'exception')]);
    expect(reader.feed(chunk).map((e) => e.event)).toEqual(['messageStart']);
    expect(() => reader.end()).toThrow(new UpstreamError('throttlingException: {"message":"Slow down."}'));
  });

  it('turns an exception frame into the upstream failure its :exception-type names, after the events before it', () => {
    const reader = new EventStreamReader(faults);
    const start = encodeEventFrame('messageStart', { role: 'assistant' });
    expect(reader.feed(Buffer.from(start))).toHaveLength(1);
    const exception = encodeEventFrame('throttlingException', { message: 'Too many tokens, please wait before trying again.' }, 'exception');
    expect(() => reader.feed(Buffer.from(exception))).toThrow(new UpstreamError('throttlingException: {"message":"Too many tokens, please wait before trying again."}'));
  });
});
