// Packages only some configurations use (AWS signing and event streams, pattern guardrails' RE2, the dashboard's single
// sign-on), loaded the first time they are needed: a gateway whose config never needs one never holds its code (issue
// 52: a module's source, functions and objects stay on the heap for the process's life once loaded). A package that is
// missing then fails with an error that names it and what needed it, not with a TypeError somewhere later.
import { createRequire } from 'node:module';
import { GatewayError } from './errors.js';

/** A package a configured feature needs is not installed (a pruned install, a partial copy): a 500 whose message only the log shows. */
export class ModuleMissingError extends GatewayError {
  readonly specifier: string;
  constructor(specifier: string, neededFor: string, cause?: unknown) {
    super('module_missing', 500, 'server_error', `${neededFor} needs the package ${specifier}, which is not installed (run npm install)`, {}, false);
    this.specifier = specifier;
    this.cause = cause;
  }
}

const requireHere = createRequire(import.meta.url);

/** Whether `err` says `specifier` itself could not be found (not a file it requires in turn, which is a broken install). */
function isMissing(err: unknown, specifier: string): boolean {
  const code = (err as { code?: unknown }).code;
  return (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && String((err as Error).message).includes(`'${specifier}'`);
}

/** A CommonJS package (or one with a `require` export), required on the first call and kept; `neededFor` names who needs it. */
export function requireOnUse<T>(specifier: string, neededFor: string, load: (specifier: string) => unknown = requireHere): () => T {
  let loaded: T | undefined;
  return () => {
    if (loaded === undefined) {
      try {
        loaded = load(specifier) as T;
      } catch (err) {
        throw isMissing(err, specifier) ? new ModuleMissingError(specifier, neededFor, err) : err;
      }
    }
    return loaded;
  };
}

/** An ES module package, imported on the first call (the promise kept); a missing one rejects with ModuleMissingError. */
export function importOnUse<T>(load: () => Promise<T>, specifier: string, neededFor: string): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((err: unknown) => {
      // Not kept: an install completed meanwhile is found by the next call.
      loaded = undefined;
      throw isMissing(err, specifier) ? new ModuleMissingError(specifier, neededFor, err) : err;
    }));
}
