// The JSON body parser: strict UTF-8, nesting depth bounded before parsing, prototype-poisoning keys refused.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../base/errors.js';
import { keepSourceText } from './json-text.js';

/** Deepest object/array nesting a request body may have; mapping code recurses, so depth is a resource like size. */
export const MAX_JSON_DEPTH = 64;


/** Whether JSON text nests objects and arrays deeper than `limit`; one linear pass that skips strings. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: jump from quote to quote, stepping over escaped characters.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Replaces fastify's JSON parser; its own (secure-json-parse) still does the parsing and the `__proto__` check. */
export function registerJsonBodyParser(app: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    // isUtf8 is simdutf's validation, cheaper per request than a fatal TextDecoder.
    if (!isUtf8(body)) return done(new ValidationError('request body is not valid UTF-8', null, 'invalid_encoding'), undefined);
    const text = body.toString('utf8');
    if (nestsDeeperThan(text, maxDepth)) {
      return done(new ValidationError(`request body nests objects or arrays more than ${maxDepth} deep`, null, 'json_too_deep'), undefined);
    }
    parse(req, text, (err, value) => {
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && parsesAsPlainJson(text)) {
        return done(new ValidationError('request body uses a forbidden key ("__proto__" or "constructor.prototype")', null, 'forbidden_key'), undefined);
      }
      // The text is kept beside the value: a pass-through relays the client's own bytes (numbers keep their digits).
      if (!err) keepSourceText(value, text);
      done(err, value);
    });
  });
}

function parsesAsPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
