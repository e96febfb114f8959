// The memory store's bytes: each entry's key and value as one record in a single Buffer outside the JS heap, so a
// stored answer is no string and no object for the collector to copy or mark. Records are written at the head, which
// makes its way round the log, skipping the records of entries gone and sliding each held one down to itself as it
// passes it: the bytes of entries gone are reused with no free list, and the log never needs more than the bound.

/** The largest log (its offsets are read as int32): 2 GiB less 4 KiB. */
export const LARGEST_LOG = 2 ** 31 - 4096;

/** A record's head: its length and its slot, two int32. */
const RECORD_HEAD = 8;

/** Rounded up to a multiple of 4 (records begin where their head can be read as int32). */
const align = (bytes: number) => (bytes + 3) & ~3;

/** No record: a slot forgotten. */
const GONE = -1;

/**
 * Buffer's own UTF-8 methods under write() and toString(), which first check their arguments and look the encoding up
 * (most of what a write of a short string costs); the offsets here are the log's own, always in range.
 */
type RawBuffer = Buffer & { utf8Write(text: string, offset: number, length: number): number; utf8Slice(start: number, end: number): string };

export class RecordLog {
  /**
   * The records; `words` is the same memory by int32, for their heads. Made whole with the first record, its pages
   * untouched until written (no memory before, nothing copied as it would grow).
   */
  private log?: RawBuffer;
  private words?: Int32Array;
  /** Where the next record goes. */
  private head = 0;
  /** The first record ahead of the head not yet passed (`head` to `ahead` is free). */
  private ahead = 0;
  /** Where the records ahead of the head end: past it, the log is free up to its end. */
  private end = 0;
  /** By slot: where its record begins (GONE once forgotten), its key's bytes, its value's. */
  private offsets = new Float64Array(256).fill(GONE);
  private keyBytes = new Int32Array(256);
  private valueBytes = new Int32Array(256);
  private readonly size: number;

  constructor(
    bytes: number,
    /** Called should a record not fit in one round of the log (the caller's bound keeps it from happening): evicts one entry, false when none is left. */
    private readonly evictOne: () => boolean,
  ) {
    this.size = align(Math.min(bytes, LARGEST_LOG));
  }

  /** Bytes a record of these takes in the log. */
  static recordBytes(keyBytes: number, valueBytes: number): number {
    return align(RECORD_HEAD + keyBytes + valueBytes);
  }

  /** Writes `slot`'s record: its key, then `head` and `value` as its value (`valueBytes` of UTF-8, or less: what is written counts). */
  write(slot: number, key: string, keyBytes: number, head: string, headBytes: number, value: string, valueBytes: number): void {
    if (slot >= this.offsets.length) this.growSlots(slot);
    const length = RecordLog.recordBytes(keyBytes, headBytes + valueBytes);
    const at = this.room(length);
    const log = this.log!;
    this.words![at >> 2] = length;
    this.words![(at >> 2) + 1] = slot;
    log.utf8Write(key, at + RECORD_HEAD, keyBytes);
    if (headBytes) log.utf8Write(head, at + RECORD_HEAD + keyBytes, headBytes);
    // What was written, in case `valueBytes` was more (a stream's chunks counted apart can count a split pair twice).
    const written = log.utf8Write(value, at + RECORD_HEAD + keyBytes + headBytes, valueBytes);
    this.offsets[slot] = at;
    this.keyBytes[slot] = keyBytes;
    this.valueBytes[slot] = headBytes + written;
  }

  /** Whether `slot`'s record is of `key`. */
  holds(slot: number, key: string): boolean {
    const at = this.offsets[slot] + RECORD_HEAD;
    return this.log!.utf8Slice(at, at + this.keyBytes[slot]) === key;
  }

  /** `slot`'s value. */
  value(slot: number): string {
    const start = this.offsets[slot] + RECORD_HEAD + this.keyBytes[slot];
    return this.log!.utf8Slice(start, start + this.valueBytes[slot]);
  }

  /** Forgets `slot`'s record: its bytes are left to be passed over by the head. */
  forget(slot: number): void {
    this.offsets[slot] = GONE;
  }

  /**
   * Where a record of `length` bytes goes: at the head, once as many free bytes lie ahead of it. Passing the records
   * ahead, the head skips those forgotten and slides each held one down to itself; past the last, the log is free to
   * its end, and past the end the head goes round to the start. The caller's bound counts more than each record takes
   * (lru.ts: ENTRY_OVERHEAD against an 8-byte head and padding) and evicts before writing, so one round is enough.
   */
  private room(length: number): number {
    if (!this.words) {
      this.log = Buffer.allocUnsafeSlow(this.size) as RawBuffer;
      this.words = new Int32Array(this.log.buffer, this.log.byteOffset, this.size >> 2);
    }
    for (let rounds = 0; ; ) {
      if (this.ahead - this.head >= length) break;
      if (this.ahead === this.end) {
        if (this.head + length <= this.size) {
          this.ahead = this.end = this.head + length;
          break;
        }
        if (++rounds > 1 && !this.evictOne()) throw new Error(`a record of ${length} bytes is larger than the log`);
        this.end = this.head;
        this.head = this.ahead = 0;
        continue;
      }
      const at = this.ahead;
      const recordLength = this.words[at >> 2];
      const slot = this.words[(at >> 2) + 1];
      this.ahead += recordLength;
      if (this.offsets[slot] !== at) continue;
      if (this.head !== at) this.log!.copy(this.log!, this.head, at, at + recordLength);
      this.offsets[slot] = this.head;
      this.head += recordLength;
    }
    const at = this.head;
    this.head += length;
    return at;
  }

  /** Room for slots up to `slot` (the arrays doubled past it). */
  private growSlots(slot: number): void {
    let length = this.offsets.length;
    while (length <= slot) length *= 2;
    const offsets = new Float64Array(length).fill(GONE);
    offsets.set(this.offsets);
    this.offsets = offsets;
    const keyBytes = new Int32Array(length);
    keyBytes.set(this.keyBytes);
    this.keyBytes = keyBytes;
    const valueBytes = new Int32Array(length);
    valueBytes.set(this.valueBytes);
    this.valueBytes = valueBytes;
  }
}
