// The shipped detectors of `pattern` guardrails: a cheap candidate regex each (linear: no nested unbounded quantifier,
// test/guardrails-detectors.test.ts holds them to safe-regex2 and to adversarial input), every candidate confirmed by a
// well-kept library where one exists: validator (e-mail, payment cards by Luhn and issuer, IBAN by country format and
// checksum), libphonenumber-js (phone numbers, by the numbering plan of their country). Secret shapes are a list of
// vendor prefixes (no maintained library exposes one synchronously; secretlint's rules run inside its own async scanner).
import validator from 'validator';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

/** A matched span of a text, named by what found it; the text itself is never kept beside it. */
export interface Span {
  start: number;
  end: number;
  detector: string;
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

/** Runs `regex` (global) over `text`, keeping each candidate `confirm` accepts (every one past CONFIRM_LIMIT). */
function scan(name: string, regex: RegExp, text: string, out: Span[], confirm?: (candidate: string) => boolean): void {
  regex.lastIndex = 0;
  let confirmed = 0;
  for (let m = regex.exec(text); m; m = regex.exec(text)) {
    if (!confirm || confirmed++ >= CONFIRM_LIMIT || confirm(m[0])) out.push({ start: m.index, end: m.index + m[0].length, detector: name });
  }
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

/**
 * The most digits in one run of `text` (digits with single separators between them: space, dash, dot, parentheses), read
 * once per text whichever detector asks first: a card needs 13, a phone number 9 (7 with its + code), so prose whose
 * numbers are dates, times and amounts skips both regexes and every library call.
 */
let lastText: string | undefined;
let lastRun = 0;
function longestDigitRun(text: string): number {
  if (text === lastText) return lastRun;
  let best = 0;
  let run = 0;
  let gap = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      run++;
      gap = 0;
      if (run > best) best = run;
    } else if ((c === 0x20 || c === 0x2d || c === 0x2e || c === 0x28 || c === 0x29 || c === 0x2b) && run && gap === 0) gap = 1;
    else {
      run = 0;
      gap = 0;
    }
  }
  lastText = text;
  lastRun = best;
  return best;
}

function phoneDetector(region: string): Detector {
  return {
    name: 'phone',
    find(text, out) {
      if (longestDigitRun(text) < 7) return;
      scan('phone', PHONE, text, out, (candidate) => {
        const digits = candidate.replace(/\D/g, '').length;
        // Without its + code a number has its area code too: 9 digits or more (a date, a time, an order number has fewer).
        return digits >= (candidate.startsWith('+') ? 7 : 9) && digits <= 15 && !!parsePhoneNumberFromString(candidate, region as CountryCode)?.isValid();
      });
    },
  };
}

const SHIPPED: Record<string, Detector> = {
  email: { name: 'email', find: (text, out) => text.includes('@') && scan('email', EMAIL, text, out, (c) => validator.isEmail(c)) },
  'payment-card': { name: 'payment-card', find: (text, out) => longestDigitRun(text) >= 13 && scan('payment-card', CARD, text, out, (c) => validator.isCreditCard(digitsOf(c))) },
  iban: { name: 'iban', find: (text, out) => scan('iban', IBAN, text, out, (c) => validator.isIBAN(c.replace(/ /g, ''))) },
  secret: { name: 'secret', find: (text, out) => scan('secret', SECRET, text, out) },
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
