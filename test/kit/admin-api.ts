// A client of the admin API (/admin/v1) for tests: calls a listening gateway and checks every answer against the
// response schema the OpenAPI document publishes for that operation and status.
import { dereference } from '@readme/openapi-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Doc = { paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: { 'application/json': { schema: object } } }> }>> };

export interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  /** The admin token to send; null sends none; absent: the client's. */
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

export type AdminApi = (method: string, path: string, options?: CallOptions) => Promise<Answer>;

/** The documented response schema of the operation that serves this method and path, for this status. */
function documenter(doc: Doc) {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  const validators = new Map<string, ValidateFunction>();
  return (method: string, path: string, status: number): ValidateFunction | undefined => {
    const template = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`).test(path));
    expect(template, `${method} ${path} is in the OpenAPI document`).toBeDefined();
    const op = doc.paths[template!][method.toLowerCase()];
    expect(op, `${method} ${template} is in the OpenAPI document`).toBeDefined();
    const response = op.responses[String(status)];
    expect(response, `${method} ${template} documents status ${status}`).toBeDefined();
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return undefined;
    const key = `${op.operationId} ${status}`;
    if (!validators.has(key)) validators.set(key, ajv.compile(schema));
    return validators.get(key);
  };
}

/** A caller of the gateway's admin API at `url` (the gateway's base), authenticated by `token` unless told otherwise. */
export async function adminApi(url: string, token: string): Promise<AdminApi> {
  const res = await fetch(`${url}/admin/v1/openapi.json`);
  const documented = documenter((await dereference(structuredClone(await res.json()))) as Doc);
  return async (method, path, options = {}) => {
    const bearer = options.token === undefined ? token : options.token;
    const answer = await fetch(`${url}/admin/v1${path}`, {
      method,
      headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await answer.text();
    const body = text ? JSON.parse(text) : undefined;
    const check = documented(method, path.split('?')[0], answer.status);
    if (check) expect(check(body), `${method} ${path} ${answer.status}: ${JSON.stringify(check.errors)} in ${text.slice(0, 500)}`).toBe(true);
    return { status: answer.status, body };
  };
}
