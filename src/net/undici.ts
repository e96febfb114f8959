// The parts of undici the gateway uses, each required from its own file. The package's index requires all of undici
// (fetch, WebSocket, EventSource, the caches, the mocks: 1.1 MB of source), and its web classes read the globals File
// and Headers, which makes Node load its own bundled copy of undici as well: about 8 MiB of every process's RSS for
// code a relay never runs (issue 52: RSS idle under 100 MiB a worker). The dispatchers, their request API, the errors
// and the retry interceptor are the same modules the index exports (one require cache), so `instanceof` holds across
// both ways in; FormData and Response, which only a multipart upstream call needs, load on its first use.
// The files and exports are undici 7's (package-lock.json pins the version; test/undici-parts.test.ts checks them).
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

export type { Dispatcher } from 'undici';

const load = createRequire(import.meta.url);
const part = <T>(file: string): T => load(`undici/lib/${file}`) as T;

// The request, stream and pipeline methods of every dispatcher, as the index adds them.
Object.assign(part<{ prototype: object }>('dispatcher/dispatcher.js').prototype, part<object>('api/index.js'));

export const Agent = part<typeof Undici.Agent>('dispatcher/agent.js');
export type Agent = Undici.Agent;
export const Pool = part<typeof Undici.Pool>('dispatcher/pool.js');
export type Pool = Undici.Pool;
export const errors = part<typeof Undici.errors>('core/errors.js');
export const util = part<typeof Undici.util>('core/util.js');
export const interceptors = { retry: part<typeof Undici.interceptors.retry>('interceptor/retry.js') };
const { getGlobalDispatcher } = part<{ getGlobalDispatcher: typeof Undici.getGlobalDispatcher }>('global.js');

type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher?: Undici.Dispatcher };

/** undici's `request(url, options)`: the method always named, on `options.dispatcher` or the global one. */
export function request(url: string | URL, { dispatcher = getGlobalDispatcher(), ...options }: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const target = typeof url === 'string' ? new URL(url) : url;
  return dispatcher.request({ ...options, origin: target.origin, path: `${target.pathname}${target.search}` });
}

type WebClasses = { FormData: typeof Undici.FormData; Response: typeof Undici.Response };
let web: WebClasses | undefined;

/** undici's FormData and Response (a multipart upstream body and its encoding), loaded on the first call. */
export function webClasses(): WebClasses {
  return (web ??= { FormData: part<WebClasses>('web/fetch/formdata.js').FormData, Response: part<WebClasses>('web/fetch/response.js').Response });
}

/** Whether `value` is an undici FormData (none can be before the classes load). */
export function isFormData(value: unknown): value is Undici.FormData {
  return web !== undefined && value instanceof web.FormData;
}
