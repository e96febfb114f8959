// Every endpoint handler by the name the catalogue gives it (endpoint.handler): imported statically, so the compiled
// gateway needs no computed import. A new handler module is added here as well as in the catalogue.
import type { HandlerFactory } from './types.js';
import batchesCancel from './batches-cancel.js';
import batchesCreate from './batches-create.js';
import batchesList from './batches-list.js';
import batchesRetrieve from './batches-retrieve.js';
import filesContent from './files-content.js';
import filesDelete from './files-delete.js';
import filesList from './files-list.js';
import filesRetrieve from './files-retrieve.js';
import filesUpload from './files-upload.js';
import health from './health.js';
import messageBatchesCancel from './message-batches-cancel.js';
import messageBatchesCreate from './message-batches-create.js';
import messageBatchesList from './message-batches-list.js';
import messageBatchesResults from './message-batches-results.js';
import messageBatchesRetrieve from './message-batches-retrieve.js';
import messagesCountTokens from './messages-count-tokens.js';
import metrics from './metrics.js';
import models from './models.js';
import pipeline from './pipeline.js';
import readiness from './readiness.js';
import tasksContent from './tasks-content.js';
import tasksList from './tasks-list.js';
import tasksRetrieve from './tasks-retrieve.js';
import usage from './usage.js';

export const handlers: Readonly<Record<string, HandlerFactory>> = {
  'batches-cancel': batchesCancel,
  'batches-create': batchesCreate,
  'batches-list': batchesList,
  'batches-retrieve': batchesRetrieve,
  'files-content': filesContent,
  'files-delete': filesDelete,
  'files-list': filesList,
  'files-retrieve': filesRetrieve,
  'files-upload': filesUpload,
  health,
  'message-batches-cancel': messageBatchesCancel,
  'message-batches-create': messageBatchesCreate,
  'message-batches-list': messageBatchesList,
  'message-batches-results': messageBatchesResults,
  'message-batches-retrieve': messageBatchesRetrieve,
  'messages-count-tokens': messagesCountTokens,
  metrics,
  models,
  pipeline,
  readiness,
  'tasks-content': tasksContent,
  'tasks-list': tasksList,
  'tasks-retrieve': tasksRetrieve,
  usage,
};
