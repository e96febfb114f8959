// POST /v1/batches: a JSONL file of the workspace (purpose batch) run as one batch by the gateway; answers the Batch object.
import { NotFoundError, ValidationError, clientValue } from '../base/errors.js';
import { createBatch } from '../batches/create.js';
import { parseInputFile } from '../batches/openai-input.js';
import { batchesOptions } from '../batches/options.js';
import { toOpenAIBatch } from '../batches/openai-wire.js';
import { batchEndpoint } from '../batches/plan.js';
import { isFileId } from '../files/ids.js';
import { findFile } from '../files/repository.js';
import type { HandlerFactory } from './types.js';

const FIELDS = new Set(['input_file_id', 'endpoint', 'completion_window', 'metadata']);

const create: HandlerFactory = ({ services }) => async (req) => {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(body).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) throw new ValidationError(`unknown or unsupported field ${clientValue(unknown)}`, unknown.slice(0, 64));
  const { input_file_id: fileId, endpoint: path, completion_window: window, metadata } = body;
  if (typeof fileId !== 'string') throw new ValidationError('missing required field "input_file_id"', 'input_file_id');
  if (typeof path !== 'string') throw new ValidationError('missing required field "endpoint"', 'endpoint');
  if (window !== '24h') throw new ValidationError('completion_window must be "24h"', 'completion_window');
  if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata) || Object.keys(metadata).length > 16)) {
    throw new ValidationError('metadata must be an object of at most 16 keys', 'metadata');
  }
  const auth = req.auth!;
  const endpoint = batchEndpoint(services.config, path, 'endpoint');
  const file = isFileId(fileId) ? await findFile(services.db, auth.workspaceId, fileId) : undefined;
  if (!file) throw new NotFoundError(`no file with id ${clientValue(fileId)}`, 'file_not_found');
  if (file.purpose !== 'batch') throw new ValidationError(`file ${clientValue(fileId)} has purpose ${clientValue(file.purpose)}; upload a batch's input with purpose "batch"`, 'input_file_id');
  // Bounded by files.maxUploadBytes, as every upload is.
  const chunks: Buffer[] = [];
  for await (const chunk of await services.blobs.get(file.blob_key)) chunks.push(chunk as Buffer);
  const lines = parseInputFile(Buffer.concat(chunks), endpoint.path, batchesOptions(services.config));
  const row = await createBatch(services, auth, { object: 'batch', endpoint, inputFileId: fileId, completionWindow: window, metadata: (metadata as Record<string, unknown> | undefined) ?? null, lines });
  return toOpenAIBatch(row);
};

export default create;
