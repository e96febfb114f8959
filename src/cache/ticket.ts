// One call's way through the response cache: bypass (the request may not be cached, or the client said no-store),
// hit (answered from the store), or miss (sent upstream; its answer kept once it went out whole and was settled).
import type { CacheConfig, CacheLimits, RouteCachePolicy } from '../config/cache.js';
import { GatewayError } from '../base/errors.js';
import type { AnswerTap, Call, ClientStream } from '../pipeline/call.js';
import type { CacheTicket } from '../pipeline/cache-stage.js';
import { recordOf } from '../request-logs/record.js';
import { AnswerCapture, type AnswerKeeper } from './capture.js';
import type { ClientControl } from './control.js';
import { answerHit, hitAnswer } from './hit.js';
import { replays, streamComplete } from './replay.js';
import type { CacheEntry } from './store.js';
import type { CacheStats, CacheOutcome } from './stats.js';
import { embed, singleTurnText, type SemanticIndex } from './semantic.js';
import { keyNumber } from './lru.js';
import type { ResponseStore } from './store.js';
import type { SharedVectors } from './shared-vectors.js';

/** What a ticket uses of the cache: its store, its bounds and its counters. */
export interface TicketDeps {
  readonly store: ResponseStore;
  readonly config: CacheConfig;
  readonly stats: CacheStats;
  readonly semantic: SemanticIndex;
  /** On Redis: the vectors other processes kept, pulled before a semantic lookup, and this one's pushed. */
  readonly sharedVectors?: SharedVectors;
}

/** Where a ticket's request stands for the semantic cache: its route and its scope (workspace and dialect). */
export interface TicketPlace {
  routeId: string;
  scope: string;
  /** The workspace that asked: the memory store counts what it stores to it (cache.maxWorkspaceBytes). */
  workspace: string;
}

/** What `Cache-Control: only-if-cached` gets when the cache has no answer for it: a 504, as RFC 9111 says, nothing sent upstream. */
const notCached = (why: string) => new GatewayError('cache_miss', 504, 'server_error', `Cache-Control: only-if-cached, and ${why}`);

/**
 * A call's ticket; on a miss it is also the call's answer tap (a JSON answer is handed to it as it goes out; an event
 * stream gets a capture of its own), so a missed JSON request makes no object besides the ticket and its entry.
 */
export class Ticket implements CacheTicket, AnswerKeeper, AnswerTap {
  constructor(
    private readonly cache: TicketDeps,
    private readonly policy: RouteCachePolicy,
    private readonly control: ClientControl,
    /** The store key; undefined when the request may not be cached (a bypass). */
    private readonly key: string | undefined,
    /** The route (or model) whose cache: this is: the semantic cache's vectors are kept per route. */
    private readonly routeId: string,
    /** How the request's key and workspace narrow the route's cache (a shorter life, smaller entries), if they do. */
    private readonly limits?: CacheLimits,
  ) {}

  /** This request's embedding, once the semantic cache made one: kept beside its answer when the answer is stored. */
  private vector?: Float32Array;
  /** Set when the entry served is a semantic match: its similarity, said in the answer's headers. */
  private similarity?: number;
  /** The call whose answer is watched, once it missed. */
  private call?: Call;
  /** The largest answer kept, once it missed. */
  private maxBytes = 0;
  /** The key's number in the memory store (keyNumber), worked out once for the lookup and the write; undefined on Redis. */
  private number?: number;

  /** Answers at once (no turn of the event loop) unless the store or the semantic lookup has to be waited for. */
  serve(call: Call): boolean | Promise<boolean> {
    if (this.key === undefined) {
      this.outcome(call, 'bypass');
      if (this.control.onlyIfCached) throw notCached('this request is not one the cache keeps');
      return false;
    }
    if (this.cache.store.memory) this.number = keyNumber(this.key);
    if (this.control.noCache) return this.answer(call, undefined);
    const read = this.cache.store.read(this.key, this.number);
    return read instanceof Promise ? read.then((entry) => this.found(call, entry)) : this.found(call, read);
  }

  /** The exact key's entry, or else (on a route with cache.semantic) its nearest earlier request's. */
  private found(call: Call, entry: CacheEntry | undefined): boolean | Promise<boolean> {
    if (!entry && this.policy.semantic) return this.nearest(call).then((near) => this.answer(call, near));
    return this.answer(call, entry);
  }

  private answer(call: Call, entry: CacheEntry | undefined): boolean | Promise<boolean> {
    if (entry) {
      const ageSeconds = Math.max(0, Math.floor((call.services.now() - entry.at) / 1000));
      // A key or workspace with a shorter life for answers takes none older than that, whoever stored it.
      const maxAge = Math.min(this.control.maxAgeSeconds ?? Infinity, this.limits?.ttlSeconds ?? Infinity);
      const form = ageSeconds <= maxAge ? hitAnswer(call, entry, streamOptionsOf(call)) : undefined;
      if (form) return this.hit(call, entry, form, ageSeconds);
    }
    this.outcome(call, 'miss');
    if (this.control.onlyIfCached) throw notCached('no stored answer for this request');
    // A full memory store takes a request's answer on its second miss (admission.ts); a client's no-cache is stored.
    if (!this.control.noCache && !this.cache.store.admits(this.number, call.auth.workspaceId)) {
      this.cache.stats.notAdmitted++;
      return false;
    }
    // The ticket watches the answer itself: no closure, and no capture object for a JSON answer.
    this.call = call;
    this.maxBytes = this.maxEntryBytes();
    call.answerTap = this;
    return false;
  }

  /** A JSON answer going out (after it is written, `bytes` long when the writer counted it): kept when it is a 200 within the bound. */
  answered(text: string, status: number, bytes?: number): void {
    // A string's UTF-8 length is at least its length: one too long is left without counting its bytes.
    if (status !== 200 || text.length > this.maxBytes) return;
    const length = bytes ?? Buffer.byteLength(text);
    if (length <= this.maxBytes) this.keepJson(text, length);
  }

  /** An event stream going out: its writes collected (up to the bound) until it ends. */
  streaming(res: ClientStream, head: Record<string, string>): void {
    new AnswerCapture(this.maxBytes, this).streaming(res, head);
  }

  /** Where the request stands for the semantic cache (made only on a route with cache.semantic). */
  private place(call: Call): TicketPlace {
    const scope = this.cache.config.sharedAcrossWorkspaces ? '*' : call.auth.workspaceId;
    return { routeId: this.routeId, scope: `${scope}\u0000${call.dialect}`, workspace: call.auth.workspaceId };
  }

  private async hit(call: Call, entry: CacheEntry, form: { json?: string; sse?: string }, ageSeconds: number): Promise<boolean> {
    this.outcome(call, 'hit');
    if (this.similarity !== undefined) {
      call.header('x-cache-match', 'semantic');
      call.header('x-cache-similarity', this.similarity.toFixed(4));
    }
    const costMicros = await answerHit(call, this.policy, entry, form, ageSeconds);
    this.cache.stats.hit(Math.max(0, entry.costMicros - costMicros), entry.currency);
    return true;
  }

  /**
   * The semantic cache's entry for a request whose exact key missed: its nearest earlier request's stored answer (the
   * answer says `x-cache-match: semantic` and the similarity), or undefined, its embedding kept for its own answer.
   */
  private async nearest(call: Call): Promise<CacheEntry | undefined> {
    const policy = this.policy.semantic;
    // Conversations only (the chat dialects): an embeddings or moderation request's answer is of its exact input.
    const text = policy && replays(call.dialect) ? singleTurnText(call.body) : undefined;
    if (!policy || text === undefined) return undefined;
    const place = this.place(call);
    this.vector = await embed(call, policy, this.routeId, text);
    if (this.vector) await this.cache.sharedVectors?.pull(policy, place, this.cache.semantic);
    const near = this.vector && this.cache.semantic.nearest(policy, place.scope, this.vector);
    const entry = near ? await this.cache.store.read(near.key) : undefined;
    if (near && entry) this.similarity = near.similarity;
    return entry;
  }

  /** A JSON answer that went out with status 200: kept. */
  keepJson(text: string, bytes: number): void {
    if (this.call) void this.keep(this.call, 'json', text, bytes);
  }

  /** An event stream that went out whole (ended, with its closing event and no error): kept. */
  keepStream(text: string, bytes: number): void {
    if (this.call && streamComplete(this.call.dialect, text)) void this.keep(this.call, 'sse', text, bytes);
  }

  /** The largest answer stored: config.yaml's, the route's and the workspace's or key's, the smallest of them. */
  private maxEntryBytes(): number {
    return Math.min(this.cache.config.maxEntryBytes, this.policy.maxEntryBytes ?? Infinity, this.limits?.maxEntryBytes ?? Infinity);
  }

  /**
   * Stores the answer with what it cost (its charge was recorded before the answer went out, and the answer has gone
   * out: the transport hands it on after writing it); never throws. What cannot be stored (an error, a life of 0, too
   * many bytes) is left before anything is made. The memory store takes the entry at once; Redis's write is not waited for.
   */
  private keep(call: Call, form: 'json' | 'sse', answer: string, answerBytes: number): void {
    if (this.key === undefined || call.clientGone || call.timedOut) return;
    const ttl = Math.min(this.policy.ttlSeconds, this.cache.config.maxTtlSeconds, this.control.ttlSeconds ?? Infinity, this.limits?.ttlSeconds ?? Infinity);
    const record = recordOf(call.carrier);
    if (ttl <= 0 || record.errorType !== null || !record.model || answerBytes > this.maxBytes) return;
    // One literal of one shape, whichever form.
    const entry: CacheEntry = {
      at: call.services.now(),
      model: record.model,
      channel: record.channel,
      costMicros: record.costMicros,
      currency: record.currency,
      inputTokens: record.inputTokens,
      outputTokens: record.outputTokens,
      cachedInputTokens: record.cachedInputTokens,
      json: form === 'json' ? answer : undefined,
      sse: form === 'sse' ? answer : undefined,
      sseOptions: form === 'sse' ? streamOptionsOf(call) : undefined,
    };
    const stored = this.cache.store.write(this.key, entry, ttl * 1000, answerBytes, call.auth.workspaceId, this.number);
    if (stored === true) this.stored(call, answerBytes, ttl);
    else if (stored !== false) void stored.then((done) => done && this.stored(call, answerBytes, ttl));
  }

  /** Counts an answer the store took, and keeps its request's embedding beside it (here, and on Redis for the others). */
  private stored(call: Call, bytes: number, ttl: number): void {
    this.cache.stats.stored(bytes);
    if (this.vector && this.policy.semantic) {
      const place = this.place(call);
      this.cache.semantic.add(this.policy.semantic, place.scope, this.key!, this.vector);
      this.cache.sharedVectors?.push(this.policy.semantic, place, this.key!, this.vector, ttl * 1000);
    }
  }

  private outcome(call: Call, outcome: CacheOutcome): void {
    call.header('x-cache', outcome);
    this.cache.stats.count(outcome);
    recordOf(call.carrier).cache = outcome;
  }
}

/** The stream options a streamed answer was made under (a stored stream replays only to the same). */
const streamOptionsOf = (call: Call) => JSON.stringify(call.body.stream_options ?? null);
