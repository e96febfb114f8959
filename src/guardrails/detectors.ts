// The shipped detectors of `pattern` guardrails: a cheap candidate regex each (linear: no nested unbounded quantifier,
// test/guardrails-detectors.test.ts holds them to safe-regex2 and to adversarial input), every candidate confirmed by a
// well-kept library where one exists: validator (e-mail, payment cards by Luhn and issuer, IBAN by country format and
// checksum), libphonenumber-js (phone numbers, by the numbering plan of their country). Secret shapes are a list of
// vendor prefixes (no maintained library exposes one synchronously; secretlint's rules run inside its own async scanner).
// The phone, card, IBAN and secret regexes run only inside the windows one shared scan of the text found (candidates.ts).
import validator from 'validator';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { candidatesOf, type Window } from './candidates.js';

/** A matched span of a text, named by what found it; the text itself is never kept beside it. */
export interface Span {
  start: number;
  end: number;
  detector: string;
  /** What takes the span's place, when not `[REDACTED:<detector>]` (a placeholder to restore, a restored value). */
  replacement?: string;
}

/** Finds its spans in a text, appending them to `out`. */
export interface Detector {
  readonly name: string;
  find(text: string, out: Span[]): void;
}

/**
 * Most candidates of one text a library confirms (a phone number's parse costs ~0.1 ms): past it, a text made of
 * candidates (a hostile 256 KiB of digit groups) has the rest taken as matches unconfirmed, failing closed in bounded time.
 */
export const CONFIRM_LIMIT = 256;

/** Runs `regex` (global) over `text`, or over each of `windows` only, keeping each candidate `confirm` accepts (every one past CONFIRM_LIMIT). */
function scan(name: string, regex: RegExp, text: string, out: Span[], confirm?: (candidate: string) => boolean, windows?: readonly Window[]): void {
  let confirmed = 0;
  const run = (from: number, slice: string) => {
    regex.lastIndex = 0;
    for (let m = regex.exec(slice); m; m = regex.exec(slice)) {
      if (!confirm || confirmed++ >= CONFIRM_LIMIT || confirm(m[0])) out.push({ start: from + m.index, end: from + m.index + m[0].length, detector: name });
    }
  };
  if (!windows) return run(0, text);
  // One character of context each side: what the regexes' lookarounds and word boundaries read.
  for (const { start, end } of windows) run(Math.max(0, start - 1), text.slice(Math.max(0, start - 1), end + 1));
}

const EMAIL = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/g;
const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const PHONE = /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d[\d .-]{5,16}\d(?!\w)/g;
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g;
/** API keys and tokens by their vendors' documented shapes (prefix, alphabet, length). */
const SECRET = new RegExp(
  [
    'sk-ant-(?:api|admin)\\d{2}-[A-Za-z0-9_-]{80,120}',
    'sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}',
    '(?:AKIA|ASIA)[A-Z0-9]{16}',
    'gh[pousr]_[A-Za-z0-9]{36,255}',
    'github_pat_[A-Za-z0-9_]{22,255}',
    'glpat-[A-Za-z0-9_-]{20,64}',
    'xox[abposr]-[A-Za-z0-9-]{10,200}',
    'AIza[0-9A-Za-z_-]{35}',
    '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,128}',
    'npm_[A-Za-z0-9]{36}',
    'hf_[A-Za-z]{34}',
    'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}',
    'eyJ[A-Za-z0-9_-]{10,4096}\\.eyJ[A-Za-z0-9_-]{10,4096}\\.[A-Za-z0-9_-]{10,1024}',
  ]
    .map((shape) => `(?<![A-Za-z0-9_-])${shape}(?![A-Za-z0-9_-])`)
    .join('|'),
  'g',
);

const digitsOf = (candidate: string) => candidate.replace(/[ -]/g, '');

/** Most phone candidates whose verdict a detector remembers (a conversation resends its earlier turns every request). */
const REMEMBERED_PHONES = 4096;

function phoneDetector(region: string): Detector {
  // The library's verdict on each candidate seen lately (a parse costs 10 to 50 µs): the same text, the same verdict.
  const verdicts = new Map<string, boolean>();
  const valid = (candidate: string): boolean => {
    let verdict = verdicts.get(candidate);
    if (verdict !== undefined) return verdict;
    verdict = !!parsePhoneNumberFromString(candidate, region as CountryCode)?.isValid();
    if (verdicts.size >= REMEMBERED_PHONES) verdicts.delete(verdicts.keys().next().value!);
    verdicts.set(candidate, verdict);
    return verdict;
  };
  return {
    name: 'phone',
    find(text, out) {
      // Without its + code a number has its area code too: 9 digits or more (a date, a time, an order number has fewer).
      // A window with fewer digits and no + holds no candidate that could be confirmed.
      const windows = candidatesOf(text).numbers.filter((w) => w.digits >= 9 || w.plus);
      withWindows(windows, (found) =>
        scan('phone', PHONE, text, out, (candidate) => {
          const digits = candidate.replace(/\D/g, '').length;
          return digits >= (candidate.startsWith('+') ? 7 : 9) && digits <= 15 && valid(candidate);
        }, found),
      );
    },
  };
}

/** Runs `scan` when the text has windows for it; prose without any costs the one pass that found none. */
const withWindows = (windows: Window[], scan: (windows: Window[]) => void): void => void (windows.length && scan(windows));

const SHIPPED: Record<string, Detector> = {
  email: { name: 'email', find: (text, out) => text.includes('@') && scan('email', EMAIL, text, out, (c) => validator.isEmail(c)) },
  'payment-card': { name: 'payment-card', find: (text, out) => withWindows(candidatesOf(text).numbers.filter((w) => w.digits >= 13), (windows) => scan('payment-card', CARD, text, out, (c) => validator.isCreditCard(digitsOf(c)), windows)) },
  iban: { name: 'iban', find: (text, out) => withWindows(candidatesOf(text).upper, (windows) => scan('iban', IBAN, text, out, (c) => validator.isIBAN(c.replace(/ /g, '')), windows)) },
  secret: { name: 'secret', find: (text, out) => withWindows(candidatesOf(text).tokens, (windows) => scan('secret', SECRET, text, out, undefined, windows)) },
  'private-key': { name: 'private-key', find: (text, out) => text.includes('-----BEGIN') && scan('private-key', PRIVATE_KEY, text, out) },
};

/** The names of the shipped detectors, as guardrail files write them. */
export const DETECTOR_NAMES: readonly string[] = [...Object.keys(SHIPPED), 'phone'].sort();

/** A shipped detector by name (`phone` reads numbers without a +code as `region`'s); undefined for an unknown name. */
export function shippedDetector(name: string, region: string): Detector | undefined {
  return name === 'phone' ? phoneDetector(region) : SHIPPED[name];
}

/** The candidate regexes, for the test that holds them to linear time. */
export const CANDIDATE_REGEXES = { EMAIL, CARD, IBAN, PHONE, PRIVATE_KEY, SECRET };
