// Which misses the memory store keeps once it is full (config.yaml cache.admission). A full store that keeps every miss
// makes every request asked once evict an answer that may be asked again, and pays for it on each such request: the
// answer watched, its entry made, an older one evicted, and an entry promoted to the old generation that a mark-compact
// then collects (bench/README.md, "thirteenth session": about 3 points of the 5.6 % a route with cache: costs when
// nothing hits). `second-miss` keeps an answer, while the store is full, only for a request that missed before: its
// first miss is remembered as one bit. That is the doorkeeper of TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A
// Highly Efficient Cache Admission Policy", ACM Transactions on Storage, 2017), as Caffeine and Ristretto keep one.

/** Bits of the doorkeeper: 128 KiB, made the first time the store is full. */
const BITS = 2 ** 20;
/**
 * First misses remembered before the doorkeeper starts again (all bits cleared): an eighth of its bits, so at most one
 * bit in eight is set, and a request never seen is taken for one seen before (a bit another number set) at most one
 * time in eight.
 */
const RESET_AFTER = BITS / 8;

export class Doorkeeper {
  private bits: Int32Array | undefined;
  private marks = 0;

  /** True when `number` (a key's keyNumber) missed since the doorkeeper last started again; otherwise it is remembered now. */
  seen(number: number): boolean {
    const bits = (this.bits ??= new Int32Array(BITS / 32));
    const index = number & (BITS - 1);
    const word = index >>> 5;
    const bit = 1 << (index & 31);
    if ((bits[word] & bit) !== 0) return true;
    bits[word] |= bit;
    if (++this.marks >= RESET_AFTER) {
      bits.fill(0);
      this.marks = 0;
    }
    return false;
  }
}
