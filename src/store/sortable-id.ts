// Ids that sort in creation order: prefix + "_" + millisecond time + a per-process counter + randomness (28 hex digits).
import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let counter = 0;
/** `lastMs` in hex, made once a millisecond instead of once an id. */
let lastMsHex = '000000000000';

/**
 * Randomness drawn a page at a time (one small randomBytes call costs more than the rest of an id), spelled in hex once
 * a page: an id slices its digits from the text instead of a native hex call of its own (two ids a request).
 */
const entropy = Buffer.allocUnsafe(4096);
let entropyHex = '';
let used = entropy.length;

/** The first counters of a millisecond, spelled once: most milliseconds make only a few ids. */
const counterHex = Array.from({ length: 256 }, (_, n) => n.toString(16).padStart(4, '0'));

/** `bytes` random bytes in hex, from the page. */
export function randomHex(bytes: number): string {
  if (used + bytes > entropy.length) {
    randomFillSync(entropy);
    entropyHex = entropy.toString('hex');
    used = 0;
  }
  used += bytes;
  return entropyHex.slice(2 * (used - bytes), 2 * used);
}

/**
 * Ids compare (as strings) in the order they were made, so list cursors need no lookup and an index on them grows
 * at its end: a batch of ledger rows touches one or two index pages instead of one random page a row.
 */
export function sortableId(prefix: string, now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
    lastMsHex = lastMs.toString(16).padStart(12, '0');
  } else if (++counter > 0xffff) {
    lastMs += 1;
    counter = 0;
    lastMsHex = lastMs.toString(16).padStart(12, '0');
  }
  return `${prefix}_${lastMsHex}${counterHex[counter] ?? counter.toString(16).padStart(4, '0')}${randomHex(6)}`;
}
