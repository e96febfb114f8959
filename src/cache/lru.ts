// The memory store: values least recently used out once the bytes held pass a bound, each until its TTL, and each
// owner (a workspace) held to a share of that bound, so that no workspace evicts every other's answers. An entry is no
// object and no string on the JS heap: its key and value are a record in one log of bytes (record-log.ts), the rest in
// typed arrays indexed by slot, as lru-cache keeps its recency: two doubly linked lists (one for all, one per owner).
// The slot map is keyed by a 30-bit number of the key (a small integer: a lookup compares numbers and reads no key),
// the key itself checked in its slot's record; two keys of one number cannot both be held (the later evicts the
// earlier, about one store in 25,000 at 40,000 entries).

import { randomInt } from 'node:crypto';
import { LARGEST_LOG, RecordLog } from './record-log.js';

/** What one entry costs besides its key's and value's bytes: its record's head, its map slot, its slot's arrays (a generous guess). */
export const ENTRY_OVERHEAD = 160;

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

export class ByteBoundedLru {
  /** Slots by their key's number (keyNumber). */
  private readonly slots = new Map<number, number>();
  private readonly owners = new Map<string, Owner>();
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
  /** The entries' keys and values. */
  private readonly log: RecordLog;
  /** Bytes held now, keys and overheads counted. */
  bytes = 0;
  /** Entries dropped to make room (for all, or within their owner's share), since the map was made. */
  evictions = 0;

  /** The most bytes held: the bound asked for, at most LARGEST_LOG. */
  readonly maxBytes: number;

  constructor(
    maxBytes: number,
    private readonly now: () => number = Date.now,
    /** The most bytes one owner's entries hold; past it, that owner's least recently used go first. */
    readonly maxOwnerBytes = maxBytes,
  ) {
    this.maxBytes = Math.min(maxBytes, LARGEST_LOG);
    this.log = new RecordLog(this.maxBytes, () => this.oldest !== NONE && (this.evict(this.oldest), true));
  }

  get size(): number {
    return this.slots.size;
  }

  /** Bytes held by one owner's entries. */
  ownerBytes(owner: string): number {
    return this.owners.get(owner)?.bytes ?? 0;
  }

  get(key: string): string | undefined {
    const slot = this.slotOf(key);
    if (slot === undefined) return undefined;
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
    return this.log.value(slot);
  }

  /**
   * Keeps `head` then `value` (`valueBytes` long in UTF-8, or less) for `ttlMs` as one value, counted to `owner` (its
   * key's and its value's UTF-8 bytes and ENTRY_OVERHEAD); false when it alone is larger than the bound or the owner's
   * share (then nothing is kept under `key`). The two are written one after the other, never joined into one string.
   */
  set(key: string, value: string, ttlMs: number, owner = '', head = '', valueBytes = Buffer.byteLength(value)): boolean {
    const number = keyNumber(key);
    const keyBytes = Buffer.byteLength(key);
    const headBytes = head.length === 0 ? 0 : Buffer.byteLength(head);
    const size = keyBytes + headBytes + valueBytes + ENTRY_OVERHEAD;
    const fits = size <= this.maxBytes && size <= this.maxOwnerBytes;
    const before = this.slots.get(number);
    // The key's earlier entry goes either way; another key's of the same number only for an entry that is kept.
    if (before !== undefined && this.log.holds(before, key)) this.remove(before);
    else if (before !== undefined && fits) this.evict(before);
    if (!fits) return false;
    // Room made before the entry is written (the log holds what the bound allows, and no more).
    let held = this.owners.get(owner);
    while (held !== undefined && held.bytes + size > this.maxOwnerBytes && held.oldest !== NONE) this.evict(held.oldest);
    while (this.bytes + size > this.maxBytes && this.oldest !== NONE) this.evict(this.oldest);
    held = this.owners.get(owner);
    if (!held) this.owners.set(owner, (held = { name: owner, bytes: 0, oldest: NONE, newest: NONE }));
    const slot = this.free.length ? this.free.pop()! : this.newSlot();
    this.log.write(slot, key, keyBytes, head, headBytes, value, valueBytes);
    // Were the log ever to evict to make room, this owner's last entry may have gone (and the owner been forgotten).
    if (this.owners.get(owner) !== held) this.owners.set(owner, held);
    this.slots.set(number, slot);
    this.numbers[slot] = number;
    this.ownerOf[slot] = held;
    this.sizes[slot] = size;
    this.expires[slot] = this.now() + ttlMs;
    this.append(slot);
    this.ownerAppend(slot, held);
    held.bytes += size;
    this.bytes += size;
    return true;
  }

  delete(key: string): boolean {
    const slot = this.slotOf(key);
    if (slot === undefined) return false;
    this.remove(slot);
    return true;
  }

  /** The slot holding `key`, if one does. */
  private slotOf(key: string): number | undefined {
    const slot = this.slots.get(keyNumber(key));
    return slot !== undefined && this.log.holds(slot, key) ? slot : undefined;
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

  /** Forgets a slot (its record is left to be written over). */
  private remove(slot: number): void {
    const owner = this.ownerOf[slot]!;
    this.slots.delete(this.numbers[slot]);
    this.unlink(slot);
    this.ownerUnlink(slot, owner);
    this.bytes -= this.sizes[slot];
    owner.bytes -= this.sizes[slot];
    if (owner.oldest === NONE) this.owners.delete(owner.name);
    this.ownerOf[slot] = undefined;
    this.log.forget(slot);
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
