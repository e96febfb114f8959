// The one SSE state machine for every declared protocol pair: upstream events become operations (data), operations
// drive block numbering and message framing (here), and each framed operation becomes client events (data).
import type { TokenUsage } from '../../billing/cost.js';
import { anthropicEnvelope, openaiEnvelope, UpstreamError, type GatewayError } from '../../base/errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamMapper, TranslateContext } from '../translator.js';
import type { Renderer } from './render.js';

/** What a decode template may render, one upstream event at a time. */
type Key = string | number | null | undefined;
type UpstreamOp =
  | { op: 'start'; id?: string }
  | { op: 'text'; key?: Key; text?: string }
  | { op: 'refusal'; key?: Key; text?: string }
  /** Thinking (Anthropic): its text, its signature, or a redacted block's data, as they arrive. */
  | { op: 'thinking'; key?: Key; text?: string; signature?: string; data?: string }
  | { op: 'tool_start'; key: Key; id: string; name: string }
  | { op: 'tool_args'; key: Key; json?: string }
  | { op: 'block_stop'; key?: Key }
  | { op: 'stop'; reason?: string; sequence?: string | null }
  | { op: 'done' }
  | { op: 'error'; type?: string };

export type EncodeStep = 'start' | 'block_start' | 'delta' | 'block_stop' | 'finish' | 'error';

export interface Block {
  index: number;
  /** `refusal`: the model's refusal text (chat `refusal`), which each client dialect frames its own way. */
  type: 'text' | 'refusal' | 'tool_use' | 'thinking';
  key: Key;
  /** Position among tool blocks only (OpenAI numbers tool calls on their own). */
  tool_index?: number;
  id?: string;
  name?: string;
}

/** A tool call started while another was open: kept whole until its turn. */
interface HeldTool {
  key: Key;
  id: string;
  name: string;
  json: string;
}

export interface StreamMachineSpec {
  decode: Record<string, Renderer>;
  encode: Record<EncodeStep, Renderer>;
  maps: Record<string, unknown>;
  /** Milliseconds since the epoch; chunks carry its seconds as `created`. */
  clock?: () => number;
  /** The message is named this prefix and the request id's key, as the translated answer is; else the upstream's id. */
  idPrefix?: string;
}

export class StreamMachine implements StreamMapper {
  protected readonly message: { id: string; model: string; created: number };
  protected started = false;
  protected finished = false;
  private current: Block | undefined;
  /** Open tool calls by upstream key: the live one (`current`), and those started while it was open, held until it closes. */
  private readonly tools = new Map<Key, Block | HeldTool>();
  /** Tool calls the upstream started while another was open, in order: they go out whole once the open one closes. */
  private held: HeldTool[] | undefined;
  private nextIndex = 0;
  private nextToolIndex = 0;
  private refused = false;
  private stop: { reason?: string; sequence?: string | null } | undefined;

  constructor(
    private readonly spec: StreamMachineSpec,
    private readonly ctx: TranslateContext,
    private readonly request: Record<string, unknown>,
  ) {
    const id = spec.idPrefix === undefined ? `msg_${ctx.requestId}` : `${spec.idPrefix}${ctx.requestId.replace(/^req_/, '')}`;
    this.message = { id, model: ctx.clientModel, created: Math.floor((spec.clock ?? Date.now)() / 1000) };
  }

  push(event: SseEvent, parse: () => unknown): SseEvent[] {
    const decode = this.spec.decode[event.event ?? 'message'];
    if (!decode || this.finished) return [];
    // An object is JSON the upstream must get right (a SyntaxError here is a malformed upstream); anything else (`[DONE]`) stays raw.
    const parsed = event.data.charCodeAt(0) === 123 ? parse() : null;
    const ops = decode({ event: parsed, raw: event.data, request: this.request, target: this.ctx.route.model, maps: this.spec.maps }) as UpstreamOp[];
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
      case 'text':
      case 'refusal':
      case 'thinking': {
        let block = this.current;
        if (!block || block.type !== op.op || block.key !== op.key) {
          this.release(out);
          block = this.open({ type: op.op, key: op.key }, out);
        }
        if (op.op === 'refusal') this.refused = true;
        if (op.op === 'thinking' && (op.text || op.signature || op.data)) this.emit('delta', { op: { ...block, text: op.text ?? '', signature: op.signature, data: op.data } }, out);
        else if (op.text) this.emit('delta', { op: { ...block, text: op.text } }, out);
        return;
      }
      case 'tool_start': {
        // Anthropic numbers blocks one after another: a call started while another is open waits until that one closes,
        // so no block's deltas ever follow its stop, whatever order the upstream interleaves argument chunks in.
        if (this.current?.type === 'tool_use') {
          const held: HeldTool = { key: op.key, id: op.id, name: op.name, json: '' };
          (this.held ??= []).push(held);
          this.tools.set(op.key, held);
          return;
        }
        this.tools.set(op.key, this.open({ type: 'tool_use', key: op.key, tool_index: this.nextToolIndex++, id: op.id, name: op.name }, out));
        return;
      }
      case 'tool_args': {
        const block = this.tools.get(op.key);
        // A tool call the client reads as text (a structured output answered through a forced tool): its arguments are the text.
        if (!block && this.current?.type === 'text' && this.current.key === op.key) {
          if (op.json) this.emit('delta', { op: { ...this.current, text: op.json } }, out);
          return;
        }
        if (!block) throw new UpstreamError(`channel "${this.ctx.route.channel.id}" streamed arguments for a tool call it never started`);
        if (!op.json) return;
        if ('json' in block) block.json += op.json;
        else if (block === this.current) this.emit('delta', { op: { ...block, json: op.json } }, out);
        else throw new UpstreamError(`channel "${this.ctx.route.channel.id}" streamed arguments for a tool call it had already ended`);
        return;
      }
      case 'block_stop':
        if (this.current && (op.key === undefined || op.key === null || op.key === this.current.key)) this.release(out);
        return;
      case 'stop':
        this.stop = { reason: op.reason, sequence: op.sequence ?? null };
        this.release(out);
        return;
      case 'done':
        this.finish(out);
        return;
    }
  }

  /** Closes the open block, then sends each held tool call whole: its start, its arguments in one delta, its stop. */
  private release(out: SseEvent[]) {
    this.close(out);
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    for (const tool of held) {
      const block = this.open({ type: 'tool_use', key: tool.key, tool_index: this.nextToolIndex++, id: tool.id, name: tool.name }, out);
      this.tools.set(tool.key, block);
      if (tool.json) this.emit('delta', { op: { ...block, json: tool.json } }, out);
      this.close(out);
    }
  }

  protected begin(id: string | undefined, out: SseEvent[]) {
    this.started = true;
    if (id && this.spec.idPrefix === undefined) this.message.id = id;
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
    this.release(out);
    this.finished = true;
    const usage = this.usage();
    this.emit('finish', { op: { reason: this.stop?.reason ?? null, sequence: this.stop?.sequence ?? null, refused: this.refused }, cost: usage ? this.ctx.costOf(usage) : null }, out);
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
      estimate: { inputTokens: this.ctx.inputEstimate ?? 0 },
      request: this.request,
      maps: this.spec.maps,
    }) as { event?: string; data: unknown }[];
  }
}
