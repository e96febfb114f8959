// The one SSE state machine for every declared protocol pair: upstream events become operations (data), operations
// drive block numbering and message framing (here), and each framed operation becomes client events (data).
import type { TokenUsage } from '../../billing/cost.js';
import { anthropicEnvelope, openaiEnvelope, UpstreamError, type GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamMapper, TranslateContext } from '../translator.js';
import type { Renderer } from './render.js';

/** What a decode template may render, one upstream event at a time. */
type Key = string | number | null | undefined;
type UpstreamOp =
  | { op: 'start'; id?: string }
  | { op: 'text'; key?: Key; text?: string }
  | { op: 'tool_start'; key: Key; id: string; name: string }
  | { op: 'tool_args'; key: Key; json?: string }
  | { op: 'block_stop'; key?: Key }
  | { op: 'stop'; reason?: string; sequence?: string | null }
  | { op: 'done' }
  | { op: 'error'; type?: string };

export type EncodeStep = 'start' | 'block_start' | 'delta' | 'block_stop' | 'finish' | 'error';

export interface Block {
  index: number;
  type: 'text' | 'tool_use';
  key: Key;
  /** Position among tool blocks only (OpenAI numbers tool calls on their own). */
  tool_index?: number;
  id?: string;
  name?: string;
}

export interface StreamMachineSpec {
  decode: Record<string, Renderer>;
  encode: Record<EncodeStep, Renderer>;
  maps: Record<string, unknown>;
  /** Milliseconds since the epoch; chunks carry its seconds as `created`. */
  clock?: () => number;
}

export class StreamMachine implements StreamMapper {
  protected readonly message: { id: string; model: string; created: number };
  protected started = false;
  protected finished = false;
  private current: Block | undefined;
  private readonly tools = new Map<Key, Block>();
  private nextIndex = 0;
  private nextToolIndex = 0;
  private stop: { reason?: string; sequence?: string | null } | undefined;

  constructor(
    private readonly spec: StreamMachineSpec,
    private readonly ctx: TranslateContext,
    private readonly request: Record<string, unknown>,
  ) {
    this.message = { id: `msg_${ctx.requestId}`, model: ctx.clientModel, created: Math.floor((spec.clock ?? Date.now)() / 1000) };
  }

  push(event: SseEvent, parse: () => unknown): SseEvent[] {
    const decode = this.spec.decode[event.event ?? 'message'];
    if (!decode || this.finished) return [];
    // An object is JSON the upstream must get right (a SyntaxError here is a malformed upstream); anything else (`[DONE]`) stays raw.
    const parsed = event.data.charCodeAt(0) === 123 ? parse() : null;
    const ops = decode({ event: parsed, raw: event.data, maps: this.spec.maps }) as UpstreamOp[];
    const out: SseEvent[] = [];
    for (const op of ops) this.apply(op, out);
    return out;
  }

  private usage(): TokenUsage | undefined {
    return this.ctx.usage();
  }

  end(): SseEvent[] {
    if (this.finished) return [];
    if (!this.stop) return this.fail(new UpstreamError(`channel "${this.ctx.route.channel.id}" ended the stream before finishing`));
    const out: SseEvent[] = [];
    this.finish(out);
    return out;
  }

  fail(error: GatewayError): SseEvent[] {
    if (this.finished) return [];
    this.finished = true;
    const out: SseEvent[] = [];
    this.emit('error', { errors: { openai: openaiEnvelope(error), anthropic: anthropicEnvelope(error) } }, out);
    return out;
  }

  private apply(op: UpstreamOp, out: SseEvent[]) {
    if (this.finished) return;
    if (op.op === 'error') throw new UpstreamError(`channel "${this.ctx.route.channel.id}" failed mid-stream${op.type ? ` (${op.type})` : ''}`);
    if (!this.started) this.begin(op.op === 'start' ? op.id : undefined, out);
    switch (op.op) {
      case 'text': {
        let block = this.current;
        if (!block || block.type !== 'text' || block.key !== op.key) block = this.open({ type: 'text', key: op.key }, out);
        if (op.text) this.emit('delta', { op: { ...block, text: op.text } }, out);
        return;
      }
      case 'tool_start': {
        const block = this.open({ type: 'tool_use', key: op.key, tool_index: this.nextToolIndex++, id: op.id, name: op.name }, out);
        this.tools.set(op.key, block);
        return;
      }
      case 'tool_args': {
        const block = this.tools.get(op.key);
        if (!block) throw new UpstreamError(`channel "${this.ctx.route.channel.id}" streamed arguments for a tool call it never started`);
        if (op.json) this.emit('delta', { op: { ...block, json: op.json } }, out);
        return;
      }
      case 'block_stop':
        if (this.current && (op.key === undefined || op.key === null || op.key === this.current.key)) this.close(out);
        return;
      case 'stop':
        this.stop = { reason: op.reason, sequence: op.sequence ?? null };
        this.close(out);
        return;
      case 'done':
        this.finish(out);
        return;
    }
  }

  protected begin(id: string | undefined, out: SseEvent[]) {
    this.started = true;
    if (id) this.message.id = id;
    this.emit('start', {}, out);
  }

  private open(block: Omit<Block, 'index'>, out: SseEvent[]): Block {
    this.close(out);
    this.current = { ...block, index: this.nextIndex++ };
    this.emit('block_start', { op: this.current }, out);
    return this.current;
  }

  private close(out: SseEvent[]) {
    if (!this.current) return;
    this.emit('block_stop', { op: this.current }, out);
    this.current = undefined;
  }

  private finish(out: SseEvent[]) {
    if (!this.started) this.begin(undefined, out);
    this.close(out);
    this.finished = true;
    const usage = this.usage();
    this.emit('finish', { op: { reason: this.stop?.reason ?? null, sequence: this.stop?.sequence ?? null }, cost: usage ? this.ctx.costOf(usage) : null }, out);
  }

  /** Renders one step's client events; a subclass may add to the scope or stamp the events before they are framed. */
  protected emit(step: EncodeStep, scope: Record<string, unknown>, out: SseEvent[]) {
    for (const e of this.render(step, scope)) out.push({ event: e.event, data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) });
  }

  protected render(step: EncodeStep, scope: Record<string, unknown>): { event?: string; data: unknown }[] {
    return this.spec.encode[step]({
      ...scope,
      message: this.message,
      usage: this.usage() ?? { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
      request: this.request,
      maps: this.spec.maps,
    }) as { event?: string; data: unknown }[];
  }
}
