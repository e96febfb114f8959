// Creating a task (POST /api/v1/videos, a family route): the pipeline's stages up to the reservation (read, resolve,
// inputs, estimate, reserve), then a task row and a background submit. The answer is the task, at once, `submitting`;
// the charge outlives the request: the runner settles it once on completion or releases it on failure.
import { namedParts } from '../http/multipart-parts.js';
import type { ModelRoute } from '../config/types.js';
import type { RouteHandler } from '../endpoints/types.js';
import { clientValue, ECHO_LIMIT, LimitError, RateLimitError, TranslationError, UnsupportedMediaError, ValidationError } from '../errors.js';
import { bytesInFlight } from '../http/bytes-in-flight.js';
import { sniffContentType } from '../files/index.js';
import { SNIFF_BYTES } from '../files/sniff.js';
import { schemaError } from '../http/schema-error.js';
import { resolveModel } from '../engine/models.js';
import { openCall, type Call } from '../pipeline/call.js';
import { checkDeclaredSize } from '../pipeline/images.js';
import { maxSecondsOf, taskEstimateMicros, type TaskParams } from './cost.js';
import { timeoutMsOf, tasksOptions } from './options.js';
import { referenceBlob, resolveReference, type ReferenceInput } from './reference.js';
import type { TaskCreateDeps } from './deps.js';
import { readCapped } from '../net/read-capped.js';
import { objectOf, taskFor, type CompiledTask, type TaskKind } from './spec.js';
import { submitOperation } from './steps.js';
import { countTasksInFlight, insertTask, newTaskId } from './store.js';
import { toTaskObject } from './wire.js';

/** A reference image upload, and the whole form, stay within this many bytes. */
const FORM_LIMIT = 25 * 1024 * 1024;
const FORM_FIELDS = new Set(['model', 'prompt', 'seconds', 'size', 'input_reference', 'input_reference[file_id]', 'input_reference[image_url]']);

export interface TaskEndpoint {
  kind: TaskKind;
  /** A family route's path (its tasks are declared with this `route`); absent for the kind's standard route. */
  route?: string;
  /** Schema of the request fields (requests/...). */
  schema: string;
}

/** Task creations in progress in this process, per key: counted with the stored unfinished tasks, so a burst cannot slip past the bound. */
const creatingByKey = new Map<string, number>();
function admitCreation(keyId: string): { before: number; end(): void } {
  const before = creatingByKey.get(keyId) ?? 0;
  creatingByKey.set(keyId, before + 1);
  let ended = false;
  return {
    before,
    end() {
      if (ended) return;
      ended = true;
      const left = (creatingByKey.get(keyId) ?? 1) - 1;
      if (left > 0) creatingByKey.set(keyId, left);
      else creatingByKey.delete(keyId);
    },
  };
}

/** The official SDK sends videos as multipart: fields, and input_reference as a file part or `input_reference[file_id]`. */
async function readForm(call: Call, hold: (bytes: number) => void): Promise<{ fields: Record<string, unknown>; upload?: ReferenceInput }> {
  const fields: Record<string, unknown> = {};
  let upload: ReferenceInput | undefined;
  let used = 0;
  for await (const part of namedParts(call.req)) {
    if (part.type === 'file') {
      if (part.fieldname !== 'input_reference' || upload) throw new ValidationError(`unexpected file field ${clientValue(part.fieldname)}; send one reference image as "input_reference"`, part.fieldname.slice(0, ECHO_LIMIT));
      // Held against the process-wide budget as it arrives, until the task is submitted.
      const bytes = await readCapped(part.file, FORM_LIMIT, () => new LimitError('a video request may carry at most 25 MiB', 'request_too_large', 'input_reference'), { used, hold });
      used += bytes.length;
      const contentType = await sniffContentType(bytes.subarray(0, SNIFF_BYTES));
      if (!contentType?.startsWith('image/')) throw new UnsupportedMediaError('input_reference is not a PNG, JPEG, WebP or GIF image (the type is read from its bytes)', 'input_reference');
      upload = { upload: { filename: part.filename || 'input_reference', contentType, bytes } };
      continue;
    }
    if (!FORM_FIELDS.has(part.fieldname)) throw new ValidationError(`unknown field ${clientValue(part.fieldname)}`, part.fieldname.slice(0, ECHO_LIMIT));
    const value = String(part.value);
    used += value.length;
    if (used > FORM_LIMIT) throw new LimitError('a video request may carry at most 25 MiB', 'request_too_large');
    const nested = /^input_reference\[(file_id|image_url)\]$/.exec(part.fieldname);
    if (nested) fields.input_reference = { [nested[1]]: value };
    else fields[part.fieldname] = value;
  }
  return { fields, upload };
}

function referenceOf(body: Record<string, unknown>, upload?: ReferenceInput): ReferenceInput | undefined {
  if (upload) return upload;
  const named = body.input_reference;
  if (typeof named === 'string') return { named };
  if (named && typeof named === 'object') {
    const { file_id: fileId, image_url: imageUrl } = named as { file_id?: string; image_url?: string };
    return { named: String(fileId ?? imageUrl) };
  }
  return undefined;
}

/** Routes of the model whose protocol runs this kind of task on this route, with each one's task. */
function resolveTaskRoutes(call: Call, endpoint: TaskEndpoint): { routes: ModelRoute[]; tasks: Map<ModelRoute, CompiledTask> } {
  const routes = resolveModel(call.config, call.body.model, endpoint.kind);
  const tasks = new Map<ModelRoute, CompiledTask>();
  for (const route of routes) {
    const task = taskFor(call.config, route, { kind: endpoint.kind, route: endpoint.route });
    if (!task) throw new TranslationError(`model ${clientValue(route.model.id)} is served by channel "${route.channel.id}", which has no ${endpoint.route ? `${endpoint.route} route` : `${endpoint.kind} task`}`, 'model');
    tasks.set(route, task);
  }
  return { routes, tasks };
}

export function taskCreateHandler(services: TaskCreateDeps, endpoint: TaskEndpoint): RouteHandler {
  return async (req, reply) => {
    const call = openCall(services, req, reply, 'tasks');
    // Reference bytes this request holds in memory, released once its submit ends (or the request fails before it).
    const budget = bytesInFlight(call.config.gateway.server.referenceBytesInFlight);
    const releases: (() => void)[] = [];
    const hold = (bytes: number) => void releases.push(budget.hold(bytes));
    const releaseBytes = () => releases.splice(0).forEach((release) => release());
    let submitted = false;
    const creating = admitCreation(call.auth.keyId);
    try {
      // A key has at most tasks.maxInFlightPerKey tasks unfinished (those being created count too).
      const options = tasksOptions(call.config);
      if ((await countTasksInFlight(services.db, call.auth.keyId)) + creating.before >= options.maxInFlightPerKey) {
        throw new RateLimitError(`this key has ${options.maxInFlightPerKey} tasks unfinished, the most it may; try again when one finishes`, 5);
      }
      // read: JSON, or the SDK's multipart form; either way checked against the one request schema.
      let upload: ReferenceInput | undefined;
      if (req.isMultipart()) {
        const form = await readForm(call, hold);
        call.body = form.fields;
        upload = form.upload;
      }
      const validate = services.schemas.validator(endpoint.schema);
      if (!validate(call.body)) throw schemaError(validate.errors![0]);
      const body = call.body;
      // resolve
      const { routes, tasks } = resolveTaskRoutes(call, endpoint);
      const route = routes[0];
      const task = tasks.get(route)!;
      const params: TaskParams = { prompt: String(body.prompt) };
      if (body.seconds !== undefined) params.seconds = Number(body.seconds);
      if (typeof body.size === 'string') params.size = body.size;
      if (endpoint.kind === 'image') checkDeclaredSize(routes, params.size);
      if (params.seconds !== undefined && params.seconds > maxSecondsOf(route)) throw new ValidationError(`seconds=${params.seconds}: model ${clientValue(route.model.id)} makes at most ${maxSecondsOf(route)} seconds`, 'seconds');
      // inputs: the reference image, as the submit operation chosen (submit.choose, stored on the task) takes it.
      const reference = referenceOf(body, upload);
      const named = reference && ('named' in reference ? reference.named : reference.upload.filename);
      const upstreamModel = route.model.upstream ?? route.model.id;
      const operation = submitOperation(task, route, { model: upstreamModel, body: { model: body.model, prompt: params.prompt, seconds: body.seconds ?? null, size: params.size ?? null, input_reference: named ?? null } });
      if (operation !== task.spec.submit.operation) params.operation = operation;
      const multipart = route.protocol.operations[operation]?.encoding === 'multipart' && !!task.spec.submit.reference;
      const resolved = reference ? await resolveReference(call, reference, multipart ? 'bytes' : 'url', FORM_LIMIT, hold) : {};
      // A JSON operation takes a URL: an uploaded image's bytes were refused above, nothing stays held.
      if (!resolved.image) releaseBytes();
      // map request, before anything is reserved (a mapping failure leaves nothing behind). Every known field is present
      // (null when not sent), so Liquid's `size` of an absent field is never a key count.
      const scopeBody = { model: body.model, prompt: params.prompt, seconds: body.seconds ?? null, size: params.size ?? null, input_reference: resolved.url ?? null };
      const document = { ...(task.request({ model: upstreamModel, body: scopeBody, operation }) as Record<string, unknown>) };
      if (resolved.image && task.spec.submit.reference) {
        document[task.spec.submit.reference] = new File([referenceBlob(resolved.image)], resolved.image.filename, { type: resolved.image.contentType });
      }
      // estimate and reserve: the worst case over the routes, held for the task's whole lifetime.
      const timeoutMs = timeoutMsOf(options, task.spec);
      const estimate = Math.max(...routes.map((r) => taskEstimateMicros(r, endpoint.kind, params)));
      const charge = await services.meter.begin({ auth: call.auth, route, requestId: req.id, estimateMicros: estimate, reservationTtlMs: timeoutMs + options.leaseMs });
      const now = Date.now();
      const submitMs = route.protocol.operations[operation]?.deadlineMs ?? route.channel.timeouts.deadlineMs;
      const row = {
        id: newTaskId(endpoint.kind === 'video' ? 'video' : 'task', now),
        workspace_id: call.auth.workspaceId,
        key_id: call.auth.keyId,
        object: objectOf(endpoint.kind),
        task: task.name,
        model: route.model.id,
        channel: route.channel.id,
        status: 'submitting' as const,
        progress: null,
        params: JSON.stringify(params),
        upstream_id: null,
        charge: JSON.stringify(charge.ref),
        file_id: null,
        archive_status: null,
        provider_url: null,
        error_code: null,
        error_message: null,
        cost_micros: null,
        created_at: Math.floor(now / 1000),
        completed_at: null,
        deadline_at: now + timeoutMs,
        next_poll_at: now,
        poll_attempts: 0,
        not_found_count: 0,
        // Held by this process while it submits; if it dies, another fails the task once this runs out (never submits twice).
        lease_owner: services.instanceId,
        lease_until: now + submitMs + options.leaseMs,
      };
      try {
        await insertTask(services.db, row);
      } catch (err) {
        await charge.release();
        throw err;
      }
      services.tasks.submit({ row, routes: [route], task, document, done: releaseBytes });
      submitted = true;
      return toTaskObject(services, req, row);
    } finally {
      creating.end();
      if (!submitted) releaseBytes();
      call.dispose();
    }
  };
}
