// The memory store: values least recently used out once the bytes held pass a bound, each until its TTL, and each
// owner (a workspace) held to a share of that bound, so that no workspace evicts every other's answers. An entry is no
// object and no string on the JS heap: its key and value are bytes in one log (a Buffer outside the heap), everything
// else about it is in typed arrays indexed by slot, as lru-cache keeps its recency. (Answers kept as strings survived
// young collections, each scavenge copying them again, and were marked at every full collection.) The log is written
// at its head; the head makes its way round the log, skipping what entries gone left behind and sliding each entry
// still held down to the head as it passes it, so the bytes of entries gone are reused with no free list and the log
// never needs more than the bound. Recency is two doubly linked lists (one for all, one per owner) by slot. The slot
// map is keyed by a 30-bit number of the key (a small integer: a lookup compares numbers and reads no key), the key
// itself checked in its slot's bytes; two keys of one number cannot both be held (the later evicts the earlier, about
// one store in 25,000 at 40,000 entries).

import { randomInt } from 'node:crypto';

/** What one entry costs besides its key's and its value's bytes: its record's head, the map's slot, the slot's arrays (a generous guess). */
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

/** The largest log (its offsets are read as int32): the memory store holds at most 2 GiB less 4 KiB. */
const LARGEST_LOG = 2 ** 31 - 4096;

/** A record's head: its length and its slot. */
const RECORD_HEAD = 8;

/** Rounded up to a multiple of 4 (records begin where their head can be read as int32). */
const align = (bytes: number) => (bytes + 3) & ~3;

/**
 * Buffer's own UTF-8 methods under write() and toString(), which first check their arguments and look the encoding up
 * (most of what a write of a short string costs); the offsets here are the log's own, always in range.
 */
type RawBuffer = Buffer & { utf8Write(text: string, offset: number, length: number): number; utf8Slice(start: number, end: number): string };

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
  /** Where each slot's record begins in the log: its length and slot (two int32), its key, then its value. */
  private offsets = new Float64Array(256);
  private keyBytes = new Int32Array(256);
  private valueBytes = new Int32Array(256);
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
  /**
   * The records; `words` is the same memory by int32, for their heads (records begin at multiples of 4). Made whole
   * with the first entry, its pages untouched until written (no memory before, none copied as it would grow).
   */
  private log?: Buffer;
  private words?: Int32Array;
  /** The log's size: the bound, rounded up to a whole record. */
  private readonly logBytes: number;
  /** Where the next record goes. */
  private head = 0;
  /** The first record ahead of the head not yet passed (`head` to `ahead` is free). */
  private ahead = 0;
  /** Where the records ahead of the head end: past it, the log is free up to its end. */
  private end = 0;
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
    this.logBytes = align(this.maxBytes);
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
    const start = this.offsets[slot] + RECORD_HEAD + this.keyBytes[slot];
    return (this.log as RawBuffer).utf8Slice(start, start + this.valueBytes[slot]);
  }

  /**
   * Keeps `head` then `value` (`valueBytes` long in UTF-8, or less) for `ttlMs` as one value, counted to `owner` (its key's and
   * its value's UTF-8 bytes and ENTRY_OVERHEAD); false when it alone is larger than the bound or the owner's share
   * (then nothing is kept under `key`). The two are written one after the other, never joined into one string first.
   */
  set(key: string, value: string, ttlMs: number, owner = '', head = '', valueBytes = Buffer.byteLength(value)): boolean {
    const number = keyNumber(key);
    const keyBytes = Buffer.byteLength(key);
    const headBytes = head.length === 0 ? 0 : Buffer.byteLength(head);
    const size = keyBytes + headBytes + valueBytes + ENTRY_OVERHEAD;
    const fits = size <= this.maxBytes && size <= this.maxOwnerBytes;
    const before = this.slots.get(number);
    // The key's earlier entry goes either way; another key's of the same number only for an entry that is kept.
    if (before !== undefined && this.holds(before, key)) this.remove(before);
    else if (before !== undefined && fits) this.evict(before);
    if (!fits) return false;
    // Room made before the entry is written (the log holds what the bound allows, and no more).
    let held = this.owners.get(owner);
    while (held !== undefined && held.bytes + size > this.maxOwnerBytes && held.oldest !== NONE) this.evict(held.oldest);
    while (this.bytes + size > this.maxBytes && this.oldest !== NONE) this.evict(this.oldest);
    held = this.owners.get(owner);
    if (!held) this.owners.set(owner, (held = { name: owner, bytes: 0, oldest: NONE, newest: NONE }));
    const slot = this.free.length ? this.free.pop()! : this.newSlot();
    const length = align(RECORD_HEAD + keyBytes + headBytes + valueBytes);
    const at = this.room(length);
    if (this.owners.get(owner) !== held) this.owners.set(owner, held);
    this.words![at >> 2] = length;
    this.words![(at >> 2) + 1] = slot;
    const log = this.log as RawBuffer;
    log.utf8Write(key, at + RECORD_HEAD, keyBytes);
    if (headBytes) log.utf8Write(head, at + RECORD_HEAD + keyBytes, headBytes);
    // What was written, in case `valueBytes` was more (a stream's chunks counted apart can count a split pair twice).
    const written = log.utf8Write(value, at + RECORD_HEAD + keyBytes + headBytes, valueBytes);
    this.slots.set(number, slot);
    this.numbers[slot] = number;
    this.offsets[slot] = at;
    this.keyBytes[slot] = keyBytes;
    this.valueBytes[slot] = headBytes + written;
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
    return slot !== undefined && this.holds(slot, key) ? slot : undefined;
  }

  /** Whether a slot's record is of `key` (read only when the key's number matched). */
  private holds(slot: number, key: string): boolean {
    const at = this.offsets[slot] + RECORD_HEAD;
    return (this.log as RawBuffer).utf8Slice(at, at + this.keyBytes[slot]) === key;
  }

  /**
   * Where a record of `length` bytes goes: at the head, once as many free bytes lie ahead of it. Passing the records
   * ahead, the head skips those of entries gone and slides each held one down to itself; past the last, the log is
   * free to its end, and past the end the head goes round to the start. The bytes held
   * count more than each record's (ENTRY_OVERHEAD against its 8-byte head and padding), and set() evicts down to the
   * bound first, so the held records and this one always fit in one round.
   */
  private room(length: number): number {
    if (!this.words) {
      this.log = Buffer.allocUnsafeSlow(this.logBytes);
      this.words = new Int32Array(this.log.buffer, this.log.byteOffset, this.logBytes >> 2);
    }
    for (let rounds = 0; ; ) {
      if (this.ahead - this.head >= length) break;
      if (this.ahead === this.end) {
        if (this.head + length <= this.logBytes) {
          this.ahead = this.end = this.head + length;
          break;
        }
        // Never twice, as the bound counts; were it so, the least recently used would go until the record fits.
        if (++rounds > 1 && this.oldest !== NONE) this.evict(this.oldest);
        this.end = this.head;
        this.head = this.ahead = 0;
        continue;
      }
      const at = this.ahead;
      const recordLength = this.words[at >> 2];
      const slot = this.words[(at >> 2) + 1];
      this.ahead += recordLength;
      if (this.ownerOf[slot] === undefined || this.offsets[slot] !== at) continue;
      if (this.head !== at) this.log!.copy(this.log!, this.head, at, at + recordLength);
      this.offsets[slot] = this.head;
      this.head += recordLength;
    }
    const at = this.head;
    this.head += length;
    return at;
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
      this.offsets = grow(this.offsets);
      this.keyBytes = grow(this.keyBytes);
      this.valueBytes = grow(this.valueBytes);
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

  /** Forgets a slot; its record is left in the log, to be passed over by the head. */
  private remove(slot: number): void {
    const owner = this.ownerOf[slot]!;
    this.slots.delete(this.numbers[slot]);
    this.unlink(slot);
    this.ownerUnlink(slot, owner);
    this.bytes -= this.sizes[slot];
    owner.bytes -= this.sizes[slot];
    if (owner.oldest === NONE) this.owners.delete(owner.name);
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
