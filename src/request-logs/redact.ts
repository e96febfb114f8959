// What captured bodies keep of a secret: nothing. A field is dropped by its name (any word of it naming a key, secret,
// token, password, credential or authorization, at any depth) and a string loses every credential by its shape (`sk-`
// keys, the gateway's own `sk-gw-` keys among them, so every live key of the workspace whatever the key presented;
// AWS key ids; `Bearer` and `Basic` credentials), whatever its case. Counts named after tokens (`max_tokens`,
// `input_tokens`, `promptTokenCount`) are usage, not secrets, and stay. Answers are redacted the same way where they are
// JSON (a whole answer, or an event stream's data lines), and by shape elsewhere.

export const REDACTED = '[REDACTED]';

/** The words that make a field name secret, wherever they stand in a word (`apikey`, `clientSecret`, `x-api-key`). */
const SECRET_WORDS = ['key', 'secret', 'token', 'password', 'passwd', 'credential', 'authorization'];
/** The word after `token` that makes the name a count (`token_count`, `promptTokenCount`, `token_usage`). */
const COUNT_WORDS = new Set(['count', 'counts', 'usage', 'limit', 'limits', 'budget', 'details']);
/** The words before `tokens` that make a plural a credential again (`access_tokens`, `refresh_tokens`). */
const CREDENTIAL_KINDS = new Set(['access', 'refresh', 'session', 'auth', 'oauth', 'api', 'bearer', 'id']);

/** A field name's words: camelCase humps and runs between separators, lower-cased (`promptTokenCount` -> prompt token count). */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** A count of tokens rather than a token: `*tokens` (unless an access or refresh token list), `token` before count, usage, limit. */
function isCount(words: string[], i: number): boolean {
  const word = words[i];
  if (word.endsWith('tokens')) return !(word === 'tokens' && i > 0 && CREDENTIAL_KINDS.has(words[i - 1]));
  return word.endsWith('token') && i + 1 < words.length && COUNT_WORDS.has(words[i + 1]);
}

/** Whether a field or header of this name holds a secret. */
export function isSecretName(name: string): boolean {
  const words = wordsOf(name);
  for (let i = 0; i < words.length; i++) {
    if (SECRET_WORDS.some((secret) => words[i].includes(secret)) && !isCount(words, i)) return true;
  }
  return false;
}

/**
 * Credentials by their shape, any case: `sk-` keys (OpenAI's, Anthropic's `sk-ant-`, the gateway's `sk-gw-`), AWS access
 * key ids (AKIA, and ASIA for temporary ones), and what follows `Bearer` or `Basic` (`Basic` only capitalised: "basic
 * idea" is prose).
 */
const KEY_SHAPE = /(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|(?:akia|asia)[a-z0-9]{16}(?![A-Za-z0-9]))/gi;
const BEARER = /\b(bearer)(\s+)[A-Za-z0-9._~+/=-]+/gi;
const BASIC = /\b(Basic)(\s+)[A-Za-z0-9._~+/=-]+/g;

/** Text with every credential shape, and the presented key, replaced. */
export function redactText(text: string, key: Secrets): string {
  let out = text.replace(BEARER, `$1$2${REDACTED}`).replace(BASIC, `$1$2${REDACTED}`).replace(KEY_SHAPE, REDACTED);
  for (const secret of typeof key === 'string' ? [key] : (key ?? [])) if (secret.length >= 8) out = out.split(secret).join(REDACTED);
  return out;
}

/** The key a request presented, or every secret a call may echo (the key, a user's own token): replaced wherever they appear. */
export type Secrets = string | readonly string[] | undefined;

/** A JSON value with secret-named fields replaced and every string redacted. */
export function redactValue(value: unknown, key: Secrets, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value, key);
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any request nests: nothing below is kept rather than kept unread.
  if (depth > 64) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, key, depth + 1));
  const out: Record<string, unknown> = {};
  // A name may be a secret itself (a map keyed by keys).
  for (const [name, v] of Object.entries(value)) out[redactText(name, key)] = isSecretName(name) ? REDACTED : redactValue(v, key, depth + 1);
  return out;
}

/** A JSON text redacted as a value (names and strings), or undefined when it is not JSON. */
function redactJsonText(text: string, key: string | undefined): string | undefined {
  try {
    return JSON.stringify(redactValue(JSON.parse(text), key));
  } catch {
    return undefined;
  }
}

/**
 * An answer as it went out, redacted: a JSON answer, or each `data:` line of an event stream that is JSON, by names and
 * shapes; any other text (a cut answer, plain text, an SSE line that is not JSON) by shapes.
 */
export function redactAnswer(text: string, key: string | undefined): string {
  const whole = redactJsonText(text, key);
  if (whole !== undefined) return whole;
  if (!text.includes('data:')) return redactText(text, key);
  return text
    .split('\n')
    .map((line) => {
      const match = /^data: ?(.*)$/.exec(line);
      const redacted = match && match[1].startsWith('{') ? redactJsonText(match[1], key) : undefined;
      return redacted === undefined ? redactText(line, key) : `data: ${redacted}`;
    })
    .join('\n');
}
