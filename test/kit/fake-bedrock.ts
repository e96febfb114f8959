// A fake Amazon Bedrock runtime built from AWS's reference: Converse answers JSON, ConverseStream answers binary
// event-stream frames (encoded here with node's own CRC32, not with the codec the gateway decodes with), and every
// request's SigV4 signature is recomputed with node:crypto (test/kit/fake-cloud-auth.ts), never with @smithy's signer.
// API: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html and API_runtime_ConverseStream.html;
// frames: https://smithy.io/2.0/aws/amazon-eventstream.html (prelude: total length, headers length, prelude CRC; headers
// as name length, name, type 7 (string), value length, value; payload; message CRC; all big-endian).
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { json, type RecordedRequest, type Route } from './fake-upstream.js';
import { sigV4Problem, type AwsKeys } from './fake-cloud-auth.js';

/** The members of ConverseRequest besides the path's modelId (the service model, bedrock-runtime 2023-09-30). */
const CONVERSE_FIELDS = new Set(['messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables', 'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'serviceTier']);

export interface BedrockUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface BedrockScript {
  text: string;
  /** Claude's extended thinking (additionalModelRequestFields.thinking): a reasoningContent block before the text. */
  reasoning?: { text: string; signature: string };
  toolUse?: { toolUseId: string; name: string; input: Record<string, unknown> };
  stopReason: string;
  usage: BedrockUsage;
  /** ConverseStream only: after this many events, an exception frame of this type instead of the rest. */
  exception?: { after: number; type: string; message: string };
  /** ConverseStream only: flip a byte of this event's payload, so its message CRC fails. */
  corruptEvent?: number;
}

/** One event-stream message: string headers, a payload, both CRCs. */
export function eventStreamFrame(headers: Record<string, string>, payload: string): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name, 'utf8');
      const v = Buffer.from(value, 'utf8');
      const head = Buffer.alloc(1 + n.length + 1 + 2);
      head.writeUInt8(n.length, 0);
      n.copy(head, 1);
      head.writeUInt8(7, 1 + n.length);
      head.writeUInt16BE(v.length, 2 + n.length);
      return Buffer.concat([head, v]);
    }),
  );
  const body = Buffer.from(payload, 'utf8');
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const withoutCrc = Buffer.concat([prelude, headerBytes, body]);
  const messageCrc = Buffer.alloc(4);
  messageCrc.writeUInt32BE(crc32(withoutCrc), 0);
  return Buffer.concat([withoutCrc, messageCrc]);
}

/** Bedrock pads each event's JSON with a `p` member of random length, so sizes say nothing about the content. */
const event = (type: string, member: Record<string, unknown>) =>
  eventStreamFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ p: 'abcdefghij'.slice(0, 1 + (type.length % 9)), ...member }));

/** Why a Converse body is one Bedrock refuses (ValidationException), or undefined. */
function converseProblem(body: Record<string, unknown>): string | undefined {
  const extra = Object.keys(body).filter((k) => !CONVERSE_FIELDS.has(k));
  if (extra.length) return `Malformed input request: extraneous key [${extra[0]}] is not permitted`;
  const messages = body.messages as { role: string; content: unknown[] }[];
  if (!Array.isArray(messages) || messages.length === 0) return 'A conversation must start with a user message.';
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== (i % 2 === 0 ? 'user' : 'assistant')) return 'A conversation must alternate between user and assistant roles.';
    for (const block of messages[i].content) if (typeof (block as { text?: unknown }).text === 'string' && !(block as { text: string }).text) return 'The text field in the ContentBlock object is blank.';
  }
  return undefined;
}

export class FakeBedrock {
  script: BedrockScript = { text: 'Hello from Bedrock.', stopReason: 'end_turn', usage: { inputTokens: 20, outputTokens: 5 } };
  /** Every signature problem found, in order (empty when every request was signed right). */
  readonly refusals: string[] = [];

  constructor(public keys: AwsKeys) {}

  readonly route: Route = (req, res) => {
    const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(req.path);
    if (!match || req.method !== 'POST') return false;
    const problem = sigV4Problem(req, this.keys, Date.now());
    if (problem) {
      this.refusals.push(problem);
      json(res, 403, { message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' }, { 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
      return true;
    }
    const invalid = converseProblem((req.body ?? {}) as Record<string, unknown>);
    if (invalid) {
      json(res, 400, { message: invalid }, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
      return true;
    }
    if (match[2] === 'converse') this.converse(res);
    else this.converseStream(res);
    return true;
  };

  private usage() {
    const u = this.script.usage;
    return { ...u, totalTokens: u.inputTokens + u.outputTokens + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0) };
  }

  private converse(res: ServerResponse) {
    const { text, reasoning, toolUse, stopReason } = this.script;
    const content = [...(reasoning ? [{ reasoningContent: { reasoningText: reasoning } }] : []), ...(text ? [{ text }] : []), ...(toolUse ? [{ toolUse }] : [])];
    json(res, 200, { output: { message: { role: 'assistant', content } }, stopReason, usage: this.usage(), metrics: { latencyMs: 42 } });
  }

  private converseStream(res: ServerResponse) {
    const { text, reasoning, toolUse, stopReason, exception, corruptEvent } = this.script;
    const frames: Buffer[] = [event('messageStart', { role: 'assistant' })];
    let index = 0;
    if (reasoning) {
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: reasoning.text } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: reasoning.signature } } }));
      frames.push(event('contentBlockStop', { contentBlockIndex: index++ }));
    }
    if (text) {
      // The text in two deltas, split inside a word.
      const cut = Math.ceil(text.length / 2);
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: text.slice(0, cut) } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: text.slice(cut) } }));
      frames.push(event('contentBlockStop', { contentBlockIndex: index++ }));
    }
    if (toolUse) {
      const input = JSON.stringify(toolUse.input);
      frames.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(0, 5) } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: input.slice(5) } } }));
      frames.push(event('contentBlockStop', { contentBlockIndex: index++ }));
    }
    frames.push(event('messageStop', { stopReason }));
    frames.push(event('metadata', { usage: this.usage(), metrics: { latencyMs: 42 } }));
    if (exception) {
      frames.splice(exception.after);
      frames.push(eventStreamFrame({ ':exception-type': exception.type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message: exception.message })));
    }
    if (corruptEvent !== undefined) {
      const frame = Buffer.from(frames[corruptEvent]);
      frame[frame.length - 6] ^= 0xff;
      frames[corruptEvent] = frame;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-request-id' });
    // Written in chunks that cut frames anywhere (7 bytes, then the rest), as a network would.
    const all = Buffer.concat(frames);
    res.write(all.subarray(0, 7));
    res.end(all.subarray(7));
  }
}

export type { RecordedRequest };
