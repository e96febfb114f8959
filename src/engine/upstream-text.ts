// Makes an upstream's error text fit for a client: read and cut to a bound, then scrubbed of URLs, credentials and key-shaped strings in linear time.
import type { Readable } from 'node:stream';
import { readPrefix } from '../net/read-capped.js';

/** Bytes of an upstream error body read at all; the rest is never buffered. */
export const UPSTREAM_BODY_LIMIT = 64 * 1024;
/** Characters of an upstream message scrubbed; a longer message is cut first, so scrubbing cost is bounded too. */
export const UPSTREAM_TEXT_LIMIT = 4096;
/** Characters of a scrubbed message a client sees. */
export const UPSTREAM_MESSAGE_LIMIT = 500;

const REDACTED = '[redacted]';

export interface ScrubContext {
  /** The model id the upstream knows, replaced by the client's. */
  upstreamModel?: string;
  clientModel: string;
  /** Exact values never to repeat (the channel's credential). */
  secrets?: (string | undefined)[];
}

/** Reads at most `limit` bytes of a body as UTF-8 and drops the rest unread. */
export async function readBoundedText(body: Readable, limit = UPSTREAM_BODY_LIMIT): Promise<string> {
  return (await readPrefix(body, limit)).toString('utf8');
}

/**
 * A URL: a short scheme, `://`, then everything up to whitespace or a quote. The scheme is bounded
 * so a long `a.a.a...` run costs at most 32 steps per position instead of the rest of the text.
 */
const URL_PATTERN = /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s"'<>]*/gi;
/** Maximal runs of the characters keys and tokens are made of; each run is then judged on its own, anchored. */
const RUN_PATTERN = /[A-Za-z0-9_~+/.-]+/g;

/** Runs that are credentials by their shape (prefixes of well-known key formats, JWTs, AWS key ids). */
const KEY_SHAPES = [/^(?:sk|pk|rk)[-_][A-Za-z0-9_-]{6}/, /^AKIA[0-9A-Z]{16}$/, /^AIza[0-9A-Za-z_-]{20}/, /^gh[pousr]_[A-Za-z0-9]{20}/, /^xox[abposr]-[A-Za-z0-9-]{10}/, /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./];
/** Words after which the next run is a credential: `Bearer x`, and (with `:` or `=` between) `api_key: x`, `"password": "x"`. */
const SCHEME_WORDS = /^(?:bearer|basic|token)$/i;
const SECRET_NAMES = /^(?:x-)?(?:api[_-]?key|apikey|key|secret|client[_-]?secret|password|passwd|token|access[_-]?token|refresh[_-]?token|authorization|credentials?)$/i;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** A long run that reads as random: all hex, or base64-like with upper case, lower case and digits. */
function looksRandom(run: string): boolean {
  if (run.length < 32) return false;
  if (/^[0-9a-fA-F]+$/.test(run)) return true;
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

/** Replaces every credential-like run; one pass over the runs, each run examined a fixed number of times. */
function redactRuns(text: string): string {
  let redactNext = false;
  let previousEnd = 0;
  let previousRun = '';
  return text.replace(RUN_PATTERN, (run: string, offset: number) => {
    const between = text.slice(previousEnd, offset);
    const afterName = redactNext || (SECRET_NAMES.test(previousRun) && /^["'\s]{0,2}[:=]["'\s]{0,2}$/.test(between)) || (SCHEME_WORDS.test(previousRun) && /^\s{1,3}$/.test(between));
    redactNext = false;
    previousEnd = offset + run.length;
    previousRun = run;
    if (afterName && run !== REDACTED) return REDACTED;
    if (KEY_SHAPES.some((shape) => shape.test(run)) || looksRandom(run)) return REDACTED;
    if (IPV4.test(run)) return '[upstream]';
    return run;
  });
}

/** Keeps an upstream's complaint about the request useful without revealing where the upstream is or any credential. */
export function scrubUpstreamText(message: string, context: ScrubContext): string {
  let clean = message.slice(0, UPSTREAM_TEXT_LIMIT);
  for (const secret of context.secrets ?? []) {
    if (secret && secret.length >= 8) clean = clean.split(secret).join(REDACTED);
  }
  if (context.upstreamModel && context.upstreamModel !== context.clientModel) clean = clean.split(context.upstreamModel).join(context.clientModel);
  clean = redactRuns(clean.replace(URL_PATTERN, '[upstream]'));
  return clean.length > UPSTREAM_MESSAGE_LIMIT ? `${clean.slice(0, UPSTREAM_MESSAGE_LIMIT)}...` : clean;
}
