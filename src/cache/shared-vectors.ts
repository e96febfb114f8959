// The semantic cache's vectors shared by every worker and replica on the cache's Redis (cache.store: redis): each vector
// a process keeps is also appended to a Redis stream of its route and scope (bounded to the route's maxEntries, living
// as long as the route's answers); before a semantic lookup, a process reads what the others appended since it last
// looked (one XRANGE from the last id it saw) into its own index, then searches that as before. Redis slow or away: the
// lookup uses what this process holds (a timeout is a plain local search, never an error), as the memory store does,
// and after a failure no lookup waits for Redis until the store's circuit probes it again (redis-guard.ts).
import { hash } from 'node:crypto';
import type { SemanticPolicy } from '../config/cache.js';
import type { RedisGuard } from './redis-guard.js';
import type { SemanticIndex } from './semantic.js';

/** What the shared vectors need of a Redis client: raw commands (streams are not part of keyv). */
export interface RedisCommands {
  sendCommand(args: string[]): Promise<unknown>;
}

/** Where a request's vectors live: its route and scope (workspace and dialect). */
export interface VectorPlace {
  routeId: string;
  scope: string;
}

/** Vectors read from a stream at once, at most (a process far behind catches up over a few lookups). */
const MAX_READ = 1000;
/** The longest vector taken from Redis (floats); an embeddings model's are a few thousand. */
const MAX_DIMENSIONS = 16_384;

export class SharedVectors {
  /** The last stream id this process read, by stream. */
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly client: () => Promise<RedisCommands>,
    private readonly namespace: string,
    /** The store's: the same deadline for each command, and the same circuit (Redis failing for the store is skipped here too). */
    private readonly guard: RedisGuard,
  ) {}

  private stream(policy: SemanticPolicy, place: VectorPlace): string {
    return `${this.namespace}:semantic:${hash('sha256', `${place.routeId}\n${policy.model}\n${place.scope}`, 'base64url')}`;
  }

  /** Brings into `index` what other processes appended for this route and scope since the last look; never throws. */
  async pull(policy: SemanticPolicy, place: VectorPlace, index: SemanticIndex): Promise<void> {
    const stream = this.stream(policy, place);
    const from = this.seen.get(stream);
    const reply = await this.guard.run(async () => (await this.client()).sendCommand(['XRANGE', stream, from === undefined ? '-' : `(${from}`, '+', 'COUNT', String(Math.min(MAX_READ, policy.maxEntries))]));
    if (!Array.isArray(reply) || !reply.length) return;
    for (const item of reply as [string, string[]][]) {
      const [id, fields] = item;
      this.seen.set(stream, id);
      const key = fields[fields.indexOf('k') + 1];
      const vector = decodeVector(fields[fields.indexOf('v') + 1]);
      if (typeof key === 'string' && key.startsWith(`${this.namespace}:`) && vector) index.add(policy, place.scope, key, vector);
    }
  }

  /** Tells the other processes about a vector this one kept (its answer stored under `key` for `ttlMs`); never throws. */
  push(policy: SemanticPolicy, place: VectorPlace, key: string, vector: Float32Array, ttlMs: number): void {
    const stream = this.stream(policy, place);
    const data = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
    void this.guard.run(async () => {
      const client = await this.client();
      await client.sendCommand(['XADD', stream, 'MAXLEN', '~', String(policy.maxEntries), '*', 'k', key, 'v', data]);
      // The stream lives as long as its newest answer: a route nobody asks again leaves nothing behind.
      await client.sendCommand(['PEXPIRE', stream, String(Math.max(1, Math.round(ttlMs)))]);
    });
  }
}

/** A vector from its base64 (little-endian float32s, as push wrote it); undefined for anything else. */
function decodeVector(text: unknown): Float32Array | undefined {
  if (typeof text !== 'string' || !text.length || text.length > Math.ceil((MAX_DIMENSIONS * 4) / 3) + 4) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (!bytes.length || bytes.length % 4) return undefined;
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector.every(Number.isFinite) ? vector : undefined;
}
