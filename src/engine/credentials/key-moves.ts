// One request's way along a channel's key pool: an entry the upstream refused (401, 429) or whose token cannot be had
// rests, and the request goes on to the next entry that can serve; a 429 moved past answers when only revoked entries are left.
import { Readable } from 'node:stream';
import { ChannelUnavailableError } from '../../base/errors.js';
import type { Metrics } from '../../base/metrics.js';
import type { UpstreamResponse } from '../upstream-request.js';
import type { KeyPool } from './key-pool.js';

/** Where the upstream client writes what an operator should know of a key pool (an entry revoked, and back). */
export interface UpstreamLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** The circuit of the channel, as a key pool's last refusal settles it. */
interface Circuit {
  success(): void;
  abandon(): void;
}

/** What a request has met on a key pool so far: the entries tried, and a 429 it moved past. */
export class KeyMoves<K extends { label: string; weight: number }> {
  readonly tried = new Set<K>();
  limited?: Error;

  constructor(
    private readonly channel: string,
    private readonly keyPool: KeyPool<K>,
    private readonly metrics?: Metrics,
    private readonly log?: UpstreamLog,
  ) {}

  /** An entry whose token cannot be had rests as after a 429 without retry-after; the next entry, if any. */
  untokened(key: K, aborted: boolean): K | undefined {
    const refusal = this.keyPool.refused(key, 0, undefined);
    this.metrics?.countKeyRest(this.channel, key.label, refusal.state);
    this.tried.add(key);
    return aborted ? undefined : this.keyPool.pick(this.tried, !!this.limited);
  }

  /**
   * Counts an entry's answer. A refusal (401, 429) the request can move past gives the next entry to try; a 401 with
   * only revoked entries left throws (the 429 met on the way, else the channel cannot serve now); else undefined: the
   * answer stands. `body` is what was sent (a stream cannot be sent again); `limitedError` reads a 429's error.
   */
  async answered(key: K, response: UpstreamResponse, body: unknown, aborted: boolean, limitedError: () => Promise<Error>, circuit: Circuit): Promise<K | undefined> {
    this.metrics?.countKeyAttempt(this.channel, key.label, response.statusCode);
    if (response.statusCode === 401 || response.statusCode === 429) {
      const next = await this.refused(key, response, body instanceof Readable || aborted, limitedError);
      if (next) return next;
      if (response.statusCode === 401) {
        await response.body.dump();
        if (this.limited) circuit.success();
        else circuit.abandon();
        throw this.limited ?? allKeysRevoked(this.channel, this.keyPool);
      }
    } else if (response.statusCode < 400 && this.keyPool.served(key)) {
      this.log?.info({ channel: this.channel, key: key.label }, `channel "${this.channel}": key ${key.label} serves again`);
    }
    return undefined;
  }

  /**
   * An entry refused (401 or 429): it rests (a 401 as revoked, logged once), and the next entry that can serve is
   * returned, or undefined when the request cannot move (no entry left, a body that cannot be sent again, the call
   * aborted). A 429 that is moved past is kept, to answer with when the only entries left are revoked.
   */
  private async refused(key: K, response: UpstreamResponse, stuck: boolean, limitedError: () => Promise<Error>): Promise<K | undefined> {
    const { channel, keyPool } = this;
    const refusal = keyPool.refused(key, response.statusCode, response.headers['retry-after']);
    this.metrics?.countKeyRest(channel, key.label, refusal.state);
    if (refusal.changed) this.log?.warn({ channel, key: key.label, status: 401, restSeconds: refusal.seconds }, `channel "${channel}": the upstream refused key ${key.label} (401); it rests ${refusal.seconds} s while the pool's other keys serve`);
    this.tried.add(key);
    const next = stuck ? undefined : keyPool.pick(this.tried, !!this.limited || response.statusCode === 429);
    if (!next) return undefined;
    if (response.statusCode === 429) this.limited = await limitedError();
    else await response.body.dump();
    return next;
  }
}

/** Every entry of a key pool rests as revoked (401): the channel cannot serve until one is tried again. */
export function allKeysRevoked<K extends { weight: number }>(channel: string, keyPool: KeyPool<K>): ChannelUnavailableError {
  const wait = keyPool.retryInSeconds();
  return new ChannelUnavailableError(`channel "${channel}": the upstream refused every key of its pool (401); the next is tried in ${wait} s`, wait);
}
