// The memory store: values least recently used out once the bytes held pass a bound, each until its TTL, and each
// owner (a workspace) held to a share of that bound, so that no workspace evicts every other's answers. Keyv's own
// memory path serialises every value again (about 150 us a write, and twice the bytes held); the store keeps its
// entries as the objects they are. Recency is two doubly linked lists (one for all, one per owner) kept in typed arrays
// indexed by slot, as lru-cache keeps its own: an entry costs its key, its value and one record of numbers, and no node
// object for the collector to copy and trace. A slot's numbers (its key's number, size, expiry and its four links) sit
// side by side in one Float64Array, eight to a record (64 bytes: one cache line), so touching a slot reads one line, not
// seven arrays' worth. Slots are found by a 30-bit number of the key in an open-addressed table (Int32Array, linear
// probing, deletions shifted back: no tombstones) rather than a Map: a store that evicts as fast as it stores churned a
// Map's ordered table, which rebuilt itself every few thousand writes and left its old table (hundreds of KiB in the
// large-object space) for the next full collection. The key itself is checked in its slot; two keys of one number
// cannot both be held (the later evicts the earlier, about one store in 25,000 at 40,000 entries).

import { randomInt } from 'node:crypto';

/** What one entry costs besides its key and its value: its record, its place in the table, the value's headers (a generous guess). */
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

/** A slot's record in `meta`: eight numbers (one 64-byte line). */
const STRIDE = 8;
const NUMBER = 0;
const SIZE = 1;
const EXPIRES = 2;
const OLDER = 3;
const NEWER = 4;
const OWNER_OLDER = 5;
const OWNER_NEWER = 6;

/** One owner's entries: their bytes and their own recency list (slots). */
interface Owner {
  name: string;
  bytes: number;
  oldest: number;
  newest: number;
}

export class ByteBoundedLru<V = string> {
  /** Open-addressed: slot + 1 at a position (0: empty), found from the key's number; never more than half full. */
  private table = new Int32Array(512);
  private mask = 511;
  /** Entries held (the table's positions in use). */
  private entries = 0;
  private readonly owners = new Map<string, Owner>();
  private keys: (string | undefined)[] = [];
  private values: (V | undefined)[] = [];
  private ownerOf: (Owner | undefined)[] = [];
  /** Each slot's record: its key's number, size, expiry, and its links in the two recency lists. */
  private meta = new Float64Array(256 * STRIDE);
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
    return this.entries;
  }

  /** Bytes held by one owner's entries. */
  ownerBytes(owner: string): number {
    return this.owners.get(owner)?.bytes ?? 0;
  }

  /**
   * Whether one more entry of the size its entries have on average would evict another: from all of them (maxBytes), or
   * from `owner`'s share (maxOwnerBytes).
   */
  full(owner: string): boolean {
    if (this.entries === 0) return false;
    const average = this.bytes / this.entries;
    if (this.bytes + average > this.maxBytes) return true;
    const held = this.owners.get(owner);
    return held !== undefined && held.bytes + average > this.maxOwnerBytes;
  }

  /** `key`'s value; `number` is keyNumber(key), when the caller has it already. */
  get(key: string, number = keyNumber(key)): V | undefined {
    const slot = this.find(number);
    if (slot === NONE || this.keys[slot] !== key) return undefined;
    const meta = this.meta;
    if (meta[slot * STRIDE + EXPIRES] <= this.now()) {
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
   * bound or the owner's share (then nothing is kept under `key`). `number` is keyNumber(key), when the caller has it.
   */
  set(key: string, value: V, ttlMs: number, valueBytes: number, owner = '', number = keyNumber(key)): boolean {
    const size = 2 * key.length + valueBytes + ENTRY_OVERHEAD;
    const fits = size <= this.maxBytes && size <= this.maxOwnerBytes;
    const before = this.find(number);
    // The key's earlier entry goes either way; another key's of the same number only for an entry that is kept.
    if (before !== NONE && this.keys[before] === key) this.remove(before);
    else if (before !== NONE && fits) this.evict(before);
    if (!fits) return false;
    let held = this.owners.get(owner);
    if (!held) this.owners.set(owner, (held = { name: owner, bytes: 0, oldest: NONE, newest: NONE }));
    const slot = this.free.length ? this.free.pop()! : this.newSlot();
    const at = slot * STRIDE;
    const meta = this.meta;
    meta[at + NUMBER] = number;
    meta[at + SIZE] = size;
    meta[at + EXPIRES] = this.now() + ttlMs;
    this.keys[slot] = key;
    this.values[slot] = value;
    this.ownerOf[slot] = held;
    this.place(number, slot);
    this.append(slot);
    this.ownerAppend(slot, held);
    held.bytes += size;
    this.bytes += size;
    while (held.bytes > this.maxOwnerBytes && held.oldest !== NONE) this.evict(held.oldest);
    while (this.bytes > this.maxBytes && this.oldest !== NONE) this.evict(this.oldest);
    return true;
  }

  delete(key: string): boolean {
    const slot = this.find(keyNumber(key));
    if (slot === NONE || this.keys[slot] !== key) return false;
    this.remove(slot);
    return true;
  }

  /** The slot whose key has `number`, or NONE. */
  private find(number: number): number {
    const table = this.table;
    const mask = this.mask;
    const meta = this.meta;
    for (let i = number & mask; ; i = (i + 1) & mask) {
      const entry = table[i];
      if (entry === 0) return NONE;
      if (meta[(entry - 1) * STRIDE + NUMBER] === number) return entry - 1;
    }
  }

  /** Puts `slot` (its number not in the table) in the table, doubling the table first past half full. */
  private place(number: number, slot: number): void {
    if (2 * (this.entries + 1) > this.table.length) this.rebuild(this.table.length * 2);
    const table = this.table;
    const mask = this.mask;
    let i = number & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = slot + 1;
    this.entries++;
  }

  /** Takes `slot` out of the table; those probed past it move back into the gap (no tombstones left). */
  private unplace(number: number, slot: number): void {
    const table = this.table;
    const mask = this.mask;
    const meta = this.meta;
    let gap = number & mask;
    while (table[gap] !== slot + 1) gap = (gap + 1) & mask;
    table[gap] = 0;
    for (let i = (gap + 1) & mask; table[i] !== 0; i = (i + 1) & mask) {
      const entry = table[i];
      const home = meta[(entry - 1) * STRIDE + NUMBER] & mask;
      // The entry may fill the gap when its home is not between the gap (exclusive) and itself (inclusive).
      if (((i - home) & mask) >= ((i - gap) & mask)) {
        table[gap] = entry;
        table[i] = 0;
        gap = i;
      }
    }
    this.entries--;
  }

  private rebuild(length: number): void {
    const old = this.table;
    const table = new Int32Array(length);
    const mask = length - 1;
    const meta = this.meta;
    for (const entry of old) {
      if (entry === 0) continue;
      let i = meta[(entry - 1) * STRIDE + NUMBER] & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = entry;
    }
    this.table = table;
    this.mask = mask;
  }

  /** A slot never used before; the records doubled when full. */
  private newSlot(): number {
    if (this.used * STRIDE === this.meta.length) {
      const meta = new Float64Array(this.meta.length * 2);
      meta.set(this.meta);
      this.meta = meta;
    }
    return this.used++;
  }

  private evict(slot: number): void {
    this.remove(slot);
    this.evictions++;
  }

  private remove(slot: number): void {
    const owner = this.ownerOf[slot]!;
    const at = slot * STRIDE;
    this.unplace(this.meta[at + NUMBER], slot);
    this.unlink(slot);
    this.ownerUnlink(slot, owner);
    const size = this.meta[at + SIZE];
    this.bytes -= size;
    owner.bytes -= size;
    if (owner.oldest === NONE) this.owners.delete(owner.name);
    this.keys[slot] = undefined;
    this.values[slot] = undefined;
    this.ownerOf[slot] = undefined;
    this.free.push(slot);
  }

  private append(slot: number): void {
    const meta = this.meta;
    meta[slot * STRIDE + OLDER] = this.newest;
    meta[slot * STRIDE + NEWER] = NONE;
    if (this.newest !== NONE) meta[this.newest * STRIDE + NEWER] = slot;
    this.newest = slot;
    if (this.oldest === NONE) this.oldest = slot;
  }

  private unlink(slot: number): void {
    const meta = this.meta;
    const older = meta[slot * STRIDE + OLDER];
    const newer = meta[slot * STRIDE + NEWER];
    if (older !== NONE) meta[older * STRIDE + NEWER] = newer;
    else this.oldest = newer;
    if (newer !== NONE) meta[newer * STRIDE + OLDER] = older;
    else this.newest = older;
  }

  private ownerAppend(slot: number, owner: Owner): void {
    const meta = this.meta;
    meta[slot * STRIDE + OWNER_OLDER] = owner.newest;
    meta[slot * STRIDE + OWNER_NEWER] = NONE;
    if (owner.newest !== NONE) meta[owner.newest * STRIDE + OWNER_NEWER] = slot;
    owner.newest = slot;
    if (owner.oldest === NONE) owner.oldest = slot;
  }

  private ownerUnlink(slot: number, owner: Owner): void {
    const meta = this.meta;
    const older = meta[slot * STRIDE + OWNER_OLDER];
    const newer = meta[slot * STRIDE + OWNER_NEWER];
    if (older !== NONE) meta[older * STRIDE + OWNER_NEWER] = newer;
    else owner.oldest = newer;
    if (newer !== NONE) meta[newer * STRIDE + OWNER_OLDER] = older;
    else owner.newest = older;
  }
}
