// Stream failover for Responses clients (engine/routing/transcript.ts): what the client has been sent of its response.*
// events (its output items built as the events build them), and a continuation's events made to go on with them: no
// second response.created, the open message item going on (no second item or part added for it), later items counting
// on, every event numbered after the client's last (`sequence_number`), the *.done events and the final response
// repeating the whole text, one response.completed with the client's response id and the usage of every attempt.
import type { SseEvent } from '../sse.js';
import { Splice, StreamTranscript, type Json, type PriorUsage } from './transcript.js';

/** Events that end a response. */
const ENDINGS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** Where in the client's output an output_text part is. */
interface PartPlace {
  outputIndex: number;
  contentIndex: number;
}

export class ResponsesTranscript extends StreamTranscript {
  id: unknown;
  createdAt: unknown;
  /** The last sequence_number the client was sent. */
  sequence = -1;
  /** The client's output items as its events built them (the final response lists them whole). */
  readonly output: Json[] = [];
  /** The output_text part the client has open: the next attempt's first text goes on in it. */
  open: PartPlace | undefined;
  /** Items other than messages the client has open (a reasoning item), by output index: a break then cannot be continued. */
  private readonly pending = new Map<number, string>();

  override blocked(): string | undefined {
    const [type] = this.pending.values();
    return this.unsafe ?? (type === undefined ? undefined : `a ${type} item in progress`);
  }

  see(data: Json): void {
    if (typeof data.sequence_number === 'number') this.sequence = data.sequence_number;
    const at = data.output_index as number;
    const item = this.output[at];
    switch (data.type) {
      case 'response.created':
        this.id ??= data.response?.id;
        this.createdAt ??= data.response?.created_at;
        return;
      case 'response.output_item.added':
        return this.added(at, data.item ?? {});
      case 'response.output_item.done':
        this.output[at] = structuredClone(data.item);
        this.pending.delete(at);
        if (this.open?.outputIndex === at) this.open = undefined;
        return;
      case 'response.content_part.added':
        if (item?.type !== 'message') return;
        (item.content ??= [])[data.content_index] = structuredClone(data.part);
        if (data.part?.type === 'output_text') this.open = { outputIndex: at, contentIndex: data.content_index };
        else this.unsafe ??= data.part?.type === 'refusal' ? 'a refusal' : `a ${String(data.part?.type)} part`;
        return;
      case 'response.content_part.done':
        if (item?.type === 'message' && Array.isArray(item.content)) item.content[data.content_index] = structuredClone(data.part);
        if (this.open?.outputIndex === at && this.open.contentIndex === data.content_index) this.open = undefined;
        return;
      case 'response.output_text.delta':
        return this.delta(this.part({ outputIndex: at, contentIndex: data.content_index }), data.delta);
      case 'response.output_text.done': {
        const part = this.part({ outputIndex: at, contentIndex: data.content_index });
        if (part && typeof data.text === 'string') part.text = data.text;
        return;
      }
      default:
        if (ENDINGS.has(data.type)) this.unsafe ??= 'the answer had ended';
    }
  }

  /** The output_text part at `place`, as the client has it. */
  part(place: PartPlace): Json | undefined {
    const part = this.output[place.outputIndex]?.content?.[place.contentIndex];
    return part?.type === 'output_text' ? part : undefined;
  }

  private added(at: number, item: Json): void {
    this.output[at] = structuredClone(item);
    if (item.type === 'reasoning') this.pending.set(at, 'reasoning');
    else if (item.type !== 'message') this.unsafe ??= `a ${String(item.type)} item in progress`;
  }

  private delta(part: Json | undefined, delta: unknown): void {
    if (!part || typeof delta !== 'string') return;
    part.text = String(part.text ?? '') + delta;
    this.append(delta);
  }

  errorOf(data: Json, event: SseEvent): string | undefined {
    if (event.event === 'error' || data.type === 'error') return typeof data.message === 'string' ? data.message : 'an error event';
    if (data.type !== 'response.failed') return undefined;
    const message = data.response?.error?.message;
    return typeof message === 'string' ? message : 'the response failed';
  }

  splice(prior: PriorUsage, trimLead: boolean): Splice {
    return new ResponsesSplice(this, prior, trimLead);
  }
}

class ResponsesSplice extends Splice {
  /** The continuation's output indexes to the client's. */
  private readonly indexes = new Map<number, number>();
  /** The continuation's message item that goes on in the client's open part: its index, its id, its first part's index. */
  private joined: { from: number; id: unknown; firstContent?: number; to: PartPlace; clientId: unknown } | undefined;

  constructor(
    protected override readonly transcript: ResponsesTranscript,
    private readonly prior: PriorUsage,
    trimLead: boolean,
  ) {
    super(transcript, trimLead);
  }

  protected event(data: Json): Json | undefined {
    const out = this.rewritten(data);
    if (out) out.sequence_number = this.transcript.sequence + 1;
    return out;
  }

  private rewritten(data: Json): Json | undefined {
    switch (data.type) {
      case 'response.created':
      case 'response.queued':
      case 'response.in_progress':
        // The client has its response open (unless the first attempt broke before saying so).
        return this.transcript.id === undefined ? data : undefined;
      case 'response.output_item.added':
        return this.added(data);
      case 'response.content_part.added': {
        const joined = this.joinedAt(data.output_index);
        if (joined && joined.firstContent === undefined && data.part?.type === 'output_text') {
          joined.firstContent = data.content_index;
          return undefined;
        }
        return this.placed(data);
      }
      case 'response.output_text.delta':
        return this.placed({ ...data, delta: typeof data.delta === 'string' ? this.trim(data.delta) : data.delta });
      case 'response.output_text.done': {
        const out = this.placed(data);
        return { ...out, text: this.transcript.part(place(out))?.text ?? out.text };
      }
      case 'response.content_part.done': {
        const out = this.placed(data);
        const text = out.part?.type === 'output_text' ? this.transcript.part(place(out))?.text : undefined;
        return text === undefined ? out : { ...out, part: { ...out.part, text } };
      }
      case 'response.output_item.done': {
        const out = this.placed(data);
        const joined = this.joinedAt(data.output_index);
        if (!joined) return out;
        return { ...out, item: { ...out.item, id: joined.clientId, content: this.transcript.output[out.output_index]?.content ?? out.item?.content } };
      }
      default:
        return ENDINGS.has(data.type) ? this.ending(data) : this.placed(data);
    }
  }

  private joinedAt(outputIndex: unknown) {
    return this.joined !== undefined && this.joined.from === outputIndex ? this.joined : undefined;
  }

  /** A new item: the first message goes on in the client's open part (nothing added), any other counts on from the client's. */
  private added(data: Json): Json | undefined {
    const open = this.transcript.open;
    if (data.item?.type === 'message' && open && !this.joined) {
      this.joined = { from: data.output_index, id: data.item.id, to: open, clientId: this.transcript.output[open.outputIndex]?.id };
      this.indexes.set(data.output_index, open.outputIndex);
      return undefined;
    }
    const to = this.transcript.output.length;
    this.indexes.set(data.output_index, to);
    return { ...data, output_index: to };
  }

  /** An event about an item, at the client's index and id (and, for the joined message, the client's content index). */
  private placed(data: Json): Json {
    const out = { ...data };
    const joined = this.joinedAt(data.output_index);
    if (typeof data.output_index === 'number') out.output_index = this.indexes.get(data.output_index) ?? data.output_index;
    if (joined && data.item_id === joined.id) out.item_id = joined.clientId;
    if (joined && typeof data.content_index === 'number') out.content_index = joined.to.contentIndex + (data.content_index - (joined.firstContent ?? data.content_index));
    return out;
  }

  /** The final event: the client's response id, every output item the client was sent, the usage of every attempt. */
  private ending(data: Json): Json {
    const response = (data.response ?? {}) as Json;
    const usage = response.usage && typeof response.usage === 'object' ? this.summed(response.usage as Json) : response.usage;
    const { id, createdAt, output } = this.transcript;
    return { ...data, response: { ...response, id: id ?? response.id, created_at: createdAt ?? response.created_at, output: output.filter(Boolean), usage } };
  }

  private summed(usage: Json): Json {
    const input = (Number(usage.input_tokens) || 0) + this.prior.inputTokens;
    const output = (Number(usage.output_tokens) || 0) + this.prior.outputTokens;
    return { ...usage, input_tokens: input, output_tokens: output, total_tokens: input + output };
  }
}

const place = (data: Json): PartPlace => ({ outputIndex: data.output_index, contentIndex: data.content_index });
