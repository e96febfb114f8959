// Building blocks of the admin API's OpenAPI document, shared by the files that describe its resources.

export const id = { type: 'string', maxLength: 128 } as const;
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const list = (name: string) => ({ type: 'object', required: ['data'], additionalProperties: false, properties: { data: { type: 'array', items: ref(name) } } });
export const json = (schema: object, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
export const errors = (...codes: number[]) =>
  Object.fromEntries([...codes, 500].map((c) => [String(c), { description: { 400: 'Bad input (or, for reload, a config that does not load)', 401: 'No or wrong credentials', 403: 'Not allowed for this caller', 404: 'Unknown id', 500: 'Internal error (nothing was changed)' }[c], content: { 'application/json': { schema: ref('Error') } } }]));
export const pathId = (name: string) => ({ name, in: 'path', required: true, schema: id });
export const body = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });
export const queryParams = (schema: { properties: Record<string, object> }) => Object.entries(schema.properties).map(([name, s]) => ({ name, in: 'query', required: false, schema: s }));
