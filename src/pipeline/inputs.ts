// The inputs stage: what a body references is fetched and checked before anything is reserved or mapped. A workspace file
// id (`file_...`) in an image or document input becomes the file's bytes, in the client dialect's own inline form, so a
// pass-through and a translation alike send the upstream the contents (another workspace's or an unknown id is 404).
// Ids that are not this gateway's (a vendor's own file store, `file-...`) are left as they are.
import { clientValue, LimitError, NotFoundError, ValidationError } from '../base/errors.js';
import { findFile, isFileId } from '../files/index.js';
import type { Call } from './call.js';
import { findResponseItems, ownsProviderId } from '../store/provider-ids.js';
import type { ModelRoute } from '../config/types.js';
import { operationDialect } from '../engine/translators.js';
import { forgetSourceText } from '../http/json-text.js';
import { holdForCall } from './image-form.js';
import { serveGatewayMcpTools } from '../mcp/responses-tools.js';

/** Inline images and documents a request may carry in all, as file ids resolved to bytes. */
const INPUT_FILES_LIMIT = 25 * 1024 * 1024;

type Part = Record<string, unknown>;
type Accepts = 'image' | 'image or pdf' | 'pdf';

const acceptsType: Record<Accepts, (type: string) => boolean> = {
  image: (type) => type.startsWith('image/'),
  'image or pdf': (type) => type.startsWith('image/') || type === 'application/pdf',
  pdf: (type) => type === 'application/pdf',
};

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Reads workspace files named by inputs, keeping count of the bytes a request inlines. */
class InputFiles {
  private used = 0;

  constructor(private readonly call: Call) {}

  /** The file `id` of the key's workspace, which must be of a type `accepts`: its content type and base64 bytes. */
  async read(id: string, accepts: Accepts, param: string): Promise<{ contentType: string; base64: string; filename: string }> {
    const { services, auth } = this.call;
    const row = await findFile(services.db, auth.workspaceId, id);
    if (!row) throw new NotFoundError(`no file ${clientValue(id)} in this workspace`, 'file_not_found');
    if (!acceptsType[accepts](row.content_type)) {
      throw new ValidationError(`file ${clientValue(id)} is ${row.content_type}, not ${accepts === 'image' ? 'an image' : `an ${accepts}`}, so it cannot be used here`, param, 'not_an_image');
    }
    this.used += row.bytes;
    if (this.used > INPUT_FILES_LIMIT) throw new LimitError('input files named by id may hold at most 25 MiB in all', 'request_too_large', param);
    // The bytes (and their data URL, a third larger) are held against the process-wide budget until the response is done.
    holdForCall(this.call)(row.bytes * 2);
    const bytes = await readAll((await services.blobs.get(row.blob_key)) as AsyncIterable<Buffer>);
    // The body is about to change in place: its text no longer says what it holds.
    forgetSourceText(this.call.body);
    return { contentType: row.content_type, base64: bytes.toString('base64'), filename: row.filename };
  }
}

const isObject = (v: unknown): v is Part => !!v && typeof v === 'object';

/** The content parts of each message (and of Anthropic tool results) that `named` says name a workspace file. */
function namedParts(messages: unknown, named: (part: Part) => boolean): Part[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  let found: Part[] | undefined;
  for (const message of messages) {
    const content = isObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (!isObject(part)) continue;
      if (named(part)) (found ??= []).push(part);
      else if (part.type === 'tool_result' && Array.isArray(part.content)) {
        for (const inner of part.content) if (isObject(inner) && named(inner)) (found ??= []).push(inner);
      }
    }
  }
  return found;
}

/**
 * Provider-side ids a Responses request names (`previous_response_id`, an `input_file` or `input_file`'s provider
 * `file_id`) must have been handed to this workspace by this gateway: another workspace's, or one it never handed out,
 * is 404 before any upstream call (a provider account is shared by every workspace).
 */
async function checkProviderIds(call: Call, parts: Record<string, unknown>[]): Promise<void> {
  const { db } = call.services;
  const workspace = call.auth.workspaceId;
  const previous = call.body.previous_response_id;
  if (previous !== undefined && previous !== null) {
    if (typeof previous !== 'string' || !(await ownsProviderId(db, 'response', previous, workspace))) throw new NotFoundError(`no response ${clientValue(String(previous))} in this workspace`, 'response_not_found');
  }
  for (const part of parts) {
    if (!part || part.type !== 'input_file' || part.file_id === undefined || part.file_id === null) continue;
    if (typeof part.file_id !== 'string' || !(await ownsProviderId(db, 'file', part.file_id, workspace))) throw new NotFoundError(`no file ${clientValue(String(part.file_id))} in this workspace`, 'file_not_found');
  }
}

/** Item references a request may make: each is one row looked up. */
const REFERENCES_LIMIT = 1000;

/** Positions of the `item_reference` items of a Responses input, or undefined when there are none. */
function itemReferences(input: unknown): number[] | undefined {
  if (!Array.isArray(input)) return undefined;
  const at: number[] = [];
  input.forEach((item, index) => {
    if (isObject(item) && item.type === 'item_reference') at.push(index);
  });
  return at.length ? at : undefined;
}

/** Replaces each item_reference with the output item this gateway kept for the workspace; any other is 404. */
async function resolveItemReferences(call: Call, at: number[]): Promise<void> {
  if (at.length > REFERENCES_LIMIT) throw new ValidationError(`a request may make at most ${REFERENCES_LIMIT} item references`, 'input');
  const input = call.body.input as Part[];
  const ids = at.map((i) => input[i].id);
  for (const id of ids) if (typeof id !== 'string') throw new ValidationError('an item_reference needs the id of an item', 'input');
  const items = await findResponseItems(call.services.db, call.auth.workspaceId, ids as string[]);
  forgetSourceText(call.body);
  for (const i of at) {
    const item = items.get(input[i].id as string);
    if (!item) throw new NotFoundError(`no item ${clientValue(String(input[i].id))} in this workspace: only items this gateway answered with, kept 30 days, can be referenced`, 'item_not_found');
    input[i] = item as Part;
  }
}

/** Every content part of a Responses input's messages. */
const responsesParts = (input: unknown): Part[] =>
  Array.isArray(input) ? input.flatMap((item) => (isObject(item) && Array.isArray(item.content) ? (item.content as Part[]) : [])) : [];

/**
 * Responses: `{type: "input_image", file_id}` naming a workspace file becomes `image_url: data:...`; on a route that
 * passes Responses through, the provider ids it names are checked first.
 */
function responsesInputs(call: Call, routes: readonly ModelRoute[]): Promise<void> | undefined {
  // Every input_image file_id must be a workspace file's: a provider's own ids are not taken here (harden, issue 27).
  const parts = namedParts(call.body.input, (p) => p.type === 'input_image' && p.file_id !== undefined && p.file_id !== null);
  // Only a route that passes Responses through forwards provider ids (a translated one refuses them with 400 itself).
  const passedThrough = routes.some((route) => operationDialect(route, 'responses') === 'openai-responses');
  // On translated routes an item_reference names an item this gateway answered the workspace with: it is resolved here.
  const references = passedThrough ? undefined : itemReferences(call.body.input);
  const mcpTools = Array.isArray(call.body.tools) && call.body.tools.some((t) => isObject(t) && t.type === 'mcp') ? (call.body.tools as unknown[]) : undefined;
  if (!parts && !passedThrough && !references && !mcpTools) return undefined;
  return (async () => {
    if (mcpTools) await gatewayMcpTools(call, mcpTools);
    if (references) await resolveItemReferences(call, references);
    if (passedThrough) await checkProviderIds(call, responsesParts(call.body.input));
    const files = new InputFiles(call);
    for (const part of parts ?? []) {
      const id = part.file_id;
      if (!isFileId(id)) throw new ValidationError(`input_image file_id ${clientValue(String(id))} is not a file id`, 'input');
      const file = await files.read(id, 'image', 'input');
      delete part.file_id;
      part.image_url = `data:${file.contentType};base64,${file.base64}`;
    }
  })();
}

/** `mcp` tools naming a gateway MCP server are pointed at the gateway, with a relay token for the key (src/mcp/responses-tools.ts). */
async function gatewayMcpTools(call: Call, tools: unknown[]): Promise<void> {
  // The tools may change in place: the body's text no longer says what it holds.
  forgetSourceText(call.body);
  await serveGatewayMcpTools({ db: call.services.db, setup: call.config.mcp, auth: call.auth, baseUrl: call.baseUrl(), now: call.services.now() }, tools);
}

const chatNamed = (p: Part) =>
  (p.type === 'image_url' && isObject(p.image_url) && isFileId(p.image_url.url)) || (p.type === 'file' && isObject(p.file) && isFileId(p.file.file_id));

/**
 * OpenAI chat: a workspace file id in `image_url.url` becomes a data URL; a `file` part naming one becomes an image_url
 * part (an image) or `file_data` (a PDF), the forms chat takes inline.
 */
function chatInputs(call: Call): Promise<void> | undefined {
  const parts = namedParts(call.body.messages, chatNamed);
  if (!parts) return undefined;
  return (async () => {
    const files = new InputFiles(call);
    for (const part of parts) {
      if (part.type === 'image_url') {
        const image = part.image_url as Part;
        const file = await files.read(image.url as string, 'image', 'messages');
        image.url = `data:${file.contentType};base64,${file.base64}`;
        continue;
      }
      const file = await files.read((part.file as Part).file_id as string, 'image or pdf', 'messages');
      if (file.contentType === 'application/pdf') part.file = { filename: file.filename, file_data: `data:application/pdf;base64,${file.base64}` };
      else {
        delete part.file;
        part.type = 'image_url';
        part.image_url = { url: `data:${file.contentType};base64,${file.base64}` };
      }
    }
  })();
}

const messagesNamed = (p: Part) => (p.type === 'image' || p.type === 'document') && isObject(p.source) && p.source.type === 'file' && isFileId(p.source.file_id);

/** Anthropic Messages: an image or document block whose `source` is `{type: "file", file_id}` of the workspace becomes a base64 source. */
function messagesInputs(call: Call): Promise<void> | undefined {
  const parts = namedParts(call.body.messages, messagesNamed);
  if (!parts) return undefined;
  return (async () => {
    const files = new InputFiles(call);
    for (const part of parts) {
      const file = await files.read((part.source as Part).file_id as string, part.type === 'image' ? 'image' : 'pdf', 'messages');
      part.source = { type: 'base64', media_type: file.contentType, data: file.base64 };
    }
  })();
}

const byDialect: Record<string, (call: Call, routes: readonly ModelRoute[]) => Promise<void> | undefined> = {
  'openai-responses': responsesInputs,
  'openai-chat': chatInputs,
  'anthropic-messages': messagesInputs,
};

/** Resolves what the request references, or returns undefined at once when it references nothing. */
export function resolveInputs(call: Call, routes: readonly ModelRoute[]): Promise<void> | undefined {
  return byDialect[call.dialect]?.(call, routes);
}
