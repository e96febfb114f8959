// One scan of a text per kind of start finds where any shipped detector could match, for all of them at once: seven
// digits with single separators (where a phone or card number may be), two capitals and two digits (where an IBAN may
// begin), a vendor key's prefix; each hit widened to the maximal run of the characters its detector's matches are made
// of. A detector's own regex then runs only inside its windows (with one character of context each side, all its
// lookarounds need), never over the prose between them: sound, because each detector's matches are made only of its
// run's characters: numbers of digits and ` +().-`, IBANs of `A-Z0-9` and spaces, keys of `A-Za-z0-9_.-`. Prose with
// no such start costs these three scans (three simple regexes, each with few first characters, scan a 4 KiB prompt in
// about half the time one alternation of them took: bench/guardrails-cpu.ts).

/** A maximal run of one class around a hit: [start, end); for numbers, its digits and whether a + is among them. */
export interface Window {
  start: number;
  end: number;
  digits: number;
  plus: boolean;
}

export interface Candidates {
  /** Runs of digits and ` +().-` holding 7 digits in a row or more (a phone number; a card needs 13 digits). */
  numbers: Window[];
  /** Runs of `A-Z0-9` and spaces that begin like an IBAN somewhere. */
  upper: Window[];
  /** Runs of `A-Za-z0-9_.-` holding a vendor key's prefix. */
  tokens: Window[];
}

/** Seven digits with single separators, unrolled (`\d(?:[ +().-]?\d){6}` backtracks through its group: three times slower). */
const SEVEN_DIGITS = new RegExp(Array(7).fill('\\d').join('[ +().-]?'), 'g');
const IBAN_START = /[A-Z]{2}\d{2}/g;
/** The prefixes every shape of the `secret` detector (detectors.ts) begins with, factored by their first characters (fewer alternatives tried at each place). */
const SECRET_START = /[sr]k[-_]|A(?:KIA|SIA|Iza)|g(?:h[pousr]_|ithub_pat_|lpat-)|xox[abposr]-|npm_|hf_|SG\.|eyJ/g;

const NUMBER = /[0-9 +().-]/;
const UPPER = /[A-Z0-9 ]/;
const TOKEN = /[A-Za-z0-9_.-]/;
/** Class bits by character code (ASCII; nothing else belongs to any run). */
const CLASSES = new Uint8Array(128).map((_, c) => (NUMBER.test(String.fromCharCode(c)) ? 1 : 0) | (UPPER.test(String.fromCharCode(c)) ? 2 : 0) | (TOKEN.test(String.fromCharCode(c)) ? 4 : 0));
const inClass = (text: string, at: number, bit: number) => {
  const c = text.charCodeAt(at);
  return c < 128 && (CLASSES[c] & bit) !== 0;
};

/** The run of class `bit` around [from, to), added to `into` unless the last window there already holds it. */
function widen(text: string, from: number, to: number, bit: number, into: Window[]): void {
  const last = into[into.length - 1];
  if (last && from < last.end) return;
  let start = from;
  let end = to;
  while (start > 0 && inClass(text, start - 1, bit)) start--;
  while (end < text.length && inClass(text, end, bit)) end++;
  let digits = 0;
  let plus = false;
  for (let i = start; bit === 1 && i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits++;
    else if (c === 0x2b) plus = true;
  }
  into.push({ start, end, digits, plus });
}

let lastText: string | undefined;
let last: Candidates | undefined;

/** Each hit of `starts` in `text`, widened to its run of class `bit`, into `into`. */
function windowsOf(text: string, starts: RegExp, bit: number, into: Window[]): Window[] {
  starts.lastIndex = 0;
  for (let m = starts.exec(text); m; m = starts.exec(text)) widen(text, m.index, m.index + m[0].length, bit, into);
  return into;
}

/** The windows of `text`, found once per text whichever detector asks first (a chain runs its detectors over one text in turn). */
export function candidatesOf(text: string): Candidates {
  if (text === lastText && last) return last;
  const found: Candidates = { numbers: windowsOf(text, SEVEN_DIGITS, 1, []), upper: windowsOf(text, IBAN_START, 2, []), tokens: windowsOf(text, SECRET_START, 4, []) };
  lastText = text;
  last = found;
  return found;
}
