// The memory store: values least recently used out once the bytes held pass a bound, each until its TTL, and each
// owner (a workspace) held to a share of that bound, so that no workspace evicts every other's answers. Keyv's own
// memory path serialises every value again (about 150 us a write, and twice the bytes held); the store keeps its
// entries as the objects they are. Recency is two doubly linked lists (one for all, one per owner) kept in typed arrays
// indexed by slot, as lru-cache keeps its own: an entry costs the map's slot, its key and its value, and no node object
// for the collector to copy and trace (a Map's first key is found past every key deleted before it, so evicting from
// its front would slow down). The map is keyed by a 30-bit number of the key (a small integer: a lookup compares
// numbers and never reads a key string, which in a large store is a cache miss for each one in the bucket), and the
// key itself is checked in its slot; two keys of one number cannot both be held (the later evicts the earlier, about
// one store in 25,000 at 40,000 entries).

import { randomInt } from 'node:crypto';

/** What one entry costs besides its key and its value: the map's slot, the slot's arrays, the value's headers (a generous guess). */
export const ENTRY_OVERHEAD = 160;

/** Bytes a string takes on the heap, at most: one per character when it is ASCII (its UTF-8 length says so), else two. */
export const heapBytes = (text: string, utf8Bytes = Buffer.byteLength(text)) => (utf8Bytes === text.length ? 1 : 2) * text.length;

/** Each process's own start for keyNumber: which keys share a number cannot be worked out from outside to evict another's entry. */
const KEY_SEED = randomInt(2 ** 32);

/** A key's number in the slot map: FNV-1a of its code units from this process's seed, to 30 bits (a V8 small integer, never boxed). */
export function keyNumber(key: string): number {
  let hash = KEY_SEED;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash & 0x3fffffff;
}

/** No slot: the end of a list. */
const NONE = -1;

/** One owner's entries: their bytes and their own recency list (slots). */
interface Owner {
  name: string;
  bytes: number;
  oldest: number;
  newest: number;
}

export class ByteBoundedLru<V = string> {
  /** Slots by their key's number (keyNumber). */
  private readonly slots = new Map<number, number>();
  private readonly owners = new Map<string, Owner>();
  private keys: (string | undefined)[] = [];
  private values: (V | undefined)[] = [];
  private ownerOf: (Owner | undefined)[] = [];
  private numbers = new Int32Array(256);
  private sizes = new Float64Array(256);
  private expires = new Float64Array(256);
  private older = new Int32Array(256);
  private newer = new Int32Array(256);
  private ownerOlder = new Int32Array(256);
  private ownerNewer = new Int32Array(256);
  /** Slots freed, taken again before a new one. */
  private readonly free: number[] = [];
  /** Slots ever used. */
  private used = 0;
  private oldest = NONE;
  private newest = NONE;
  /** Bytes held now, keys and overheads counted. */
  bytes = 0;
  /** Entries dropped to make room (for all, or within their owner's share), since the map was made. */
  evictions = 0;

  constructor(
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
    /** The most bytes one owner's entries hold; past it, that owner's least recently used go first. */
    readonly maxOwnerBytes = maxBytes,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  /** Bytes held by one owner's entries. */
  ownerBytes(owner: string): number {
    return this.owners.get(owner)?.bytes ?? 0;
  }

  get(key: string): V | undefined {
    const slot = this.slots.get(keyNumber(key));
    if (slot === undefined || this.keys[slot] !== key) return undefined;
    if (this.expires[slot] <= this.now()) {
      this.remove(slot);
      return undefined;
    }
    if (slot !== this.newest) {
      this.unlink(slot);
      this.append(slot);
    }
    const owner = this.ownerOf[slot]!;
    if (slot !== owner.newest) {
      this.ownerUnlink(slot, owner);
      this.ownerAppend(slot, owner);
    }
    return this.values[slot];
  }

  /**
   * Keeps `value` (of `valueBytes` on the heap) for `ttlMs`, counted to `owner`; false when it alone is larger than the
   * bound or the owner's share (then nothing is kept under `key`).
   */
  set(key: string, value: V, ttlMs: number, valueBytes: number, owner = ''): boolean {
    const number = keyNumber(key);
    const size = 2 * key.length + valueBytes + ENTRY_OVERHEAD;
    const fits = size <= this.maxBytes && size <= this.maxOwnerBytes;
    const before = this.slots.get(number);
    // The key's earlier entry goes either way; another key's of the same number only for an entry that is kept.
    if (before !== undefined && this.keys[before] === key) this.remove(before);
    else if (before !== undefined && fits) this.evict(before);
    if (!fits) return false;
    let held = this.owners.get(owner);
    if (!held) this.owners.set(owner, (held = { name: owner, bytes: 0, oldest: NONE, newest: NONE }));
    const slot = this.free.length ? this.free.pop()! : this.newSlot();
    this.slots.set(number, slot);
    this.numbers[slot] = number;
    this.keys[slot] = key;
    this.values[slot] = value;
    this.ownerOf[slot] = held;
    this.sizes[slot] = size;
    this.expires[slot] = this.now() + ttlMs;
    this.append(slot);
    this.ownerAppend(slot, held);
    held.bytes += size;
    this.bytes += size;
    while (held.bytes > this.maxOwnerBytes && held.oldest !== NONE) this.evict(held.oldest);
    while (this.bytes > this.maxBytes && this.oldest !== NONE) this.evict(this.oldest);
    return true;
  }

  delete(key: string): boolean {
    const slot = this.slots.get(keyNumber(key));
    if (slot === undefined || this.keys[slot] !== key) return false;
    this.remove(slot);
    return true;
  }

  /** A slot never used before; the arrays doubled when full. */
  private newSlot(): number {
    if (this.used === this.sizes.length) {
      const grow = <T extends Float64Array | Int32Array>(from: T): T => {
        const to = new (from.constructor as new (n: number) => T)(from.length * 2);
        to.set(from);
        return to;
      };
      this.numbers = grow(this.numbers);
      this.sizes = grow(this.sizes);
      this.expires = grow(this.expires);
      this.older = grow(this.older);
      this.newer = grow(this.newer);
      this.ownerOlder = grow(this.ownerOlder);
      this.ownerNewer = grow(this.ownerNewer);
    }
    return this.used++;
  }

  private evict(slot: number): void {
    this.remove(slot);
    this.evictions++;
  }

  private remove(slot: number): void {
    const owner = this.ownerOf[slot]!;
    this.slots.delete(this.numbers[slot]);
    this.unlink(slot);
    this.ownerUnlink(slot, owner);
    this.bytes -= this.sizes[slot];
    owner.bytes -= this.sizes[slot];
    if (owner.oldest === NONE) this.owners.delete(owner.name);
    this.keys[slot] = undefined;
    this.values[slot] = undefined;
    this.ownerOf[slot] = undefined;
    this.free.push(slot);
  }

  private append(slot: number): void {
    this.older[slot] = this.newest;
    this.newer[slot] = NONE;
    if (this.newest !== NONE) this.newer[this.newest] = slot;
    this.newest = slot;
    if (this.oldest === NONE) this.oldest = slot;
  }

  private unlink(slot: number): void {
    const older = this.older[slot];
    const newer = this.newer[slot];
    if (older !== NONE) this.newer[older] = newer;
    else this.oldest = newer;
    if (newer !== NONE) this.older[newer] = older;
    else this.newest = older;
  }

  private ownerAppend(slot: number, owner: Owner): void {
    this.ownerOlder[slot] = owner.newest;
    this.ownerNewer[slot] = NONE;
    if (owner.newest !== NONE) this.ownerNewer[owner.newest] = slot;
    owner.newest = slot;
    if (owner.oldest === NONE) owner.oldest = slot;
  }

  private ownerUnlink(slot: number, owner: Owner): void {
    const older = this.ownerOlder[slot];
    const newer = this.ownerNewer[slot];
    if (older !== NONE) this.ownerNewer[older] = newer;
    else owner.oldest = newer;
    if (newer !== NONE) this.ownerOlder[newer] = older;
    else owner.newest = older;
  }
}
