// The task flow: creating a task (POST /api/v1/videos, a family route) as the pipeline runs it: read (JSON or the SDK's multipart
// form), resolve, inputs (the reference image, then the mapped submit document), estimate, reserve (for the task's whole
// lifetime), then the hand-over: a task row and a background submit. The answer is the task, at once, `submitting`; the
// charge is handed over to the task: the runner settles it once on completion or releases it on failure.
import type { EndpointConfig, ModelRoute } from '../config/types.js';
import { clientValue, ECHO_LIMIT, LimitError, RateLimitError, TranslationError, ValidationError } from '../base/errors.js';
import { bytesInFlight } from '../http/bytes-in-flight.js';
import { schemaError } from '../http/schema-error.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import type { Call } from '../pipeline/call.js';
import type { Flow } from '../pipeline/flow.js';
import { readForm, type FormRules } from '../pipeline/form.js';
import { checkDeclaredSize } from './images.js';
import type { Charge } from '../billing/meter.js';
import { mostUnitsOf, reservedUnitsOf, taskEstimateMicros, type TaskParams } from '../tasks/cost.js';
import { taskFamilyOf, type TaskFamily } from '../tasks/family.js';
import { timeoutMsOf, tasksOptions } from '../tasks/options.js';
import { inlineImage, referenceBlob, resolveReference, type ReferenceInput } from '../tasks/reference.js';
import type { TaskCreateDeps } from '../tasks/deps.js';
import { taskFor, type CompiledTask } from '../tasks/spec.js';
import { submitOperation } from '../tasks/steps.js';
import { countTasksInFlight, insertTask, newTaskId, type TaskRow } from '../tasks/store.js';
import { toTaskObject } from '../tasks/wire.js';

/** A reference image upload, and the whole form, stay within this many bytes. */
const FORM_LIMIT = 25 * 1024 * 1024;

/** A task route: its family (the catalogue entry's `pipeline.task`) and what it is served as. */
interface TaskEndpoint {
  family: TaskFamily;
  /** A route a protocol declares (`routes: declared`: its tasks are declared with this `route`); absent for the entry's own path. */
  route?: string;
  /** Schema of the request fields (requests/...). */
  schema: string;
  /** The form's rules, for an entry that takes multipart bodies (`multipart: true`); JSON only without. */
  form?: FormRules;
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

/** Reference bytes a request holds in memory, released once its submit ends (or when the request ends without one). */
class HeldBytes {
  private readonly releases: (() => void)[] = [];
  submitted = false;
  constructor(private readonly budget: ReturnType<typeof bytesInFlight>) {}
  readonly hold = (bytes: number): void => void this.releases.push(this.budget.hold(bytes));
  readonly release = (): void => this.releases.splice(0).forEach((release) => release());
  readonly releaseUnlessSubmitted = (): void => {
    if (!this.submitted) this.release();
  };
}

/** The official SDK sends videos as multipart: fields, and input_reference as a file part or `input_reference[file_id]`. */
const formRules = (noun: string): FormRules => ({
  fields: new Set(['model', 'prompt', 'seconds', 'size', 'input_reference', 'input_reference[file_id]', 'input_reference[image_url]']),
  file: (fieldname, images) =>
    fieldname === 'input_reference' && !images.length ? fieldname : new ValidationError(`unexpected file field ${clientValue(fieldname)}; send one reference image as "input_reference"`, fieldname.slice(0, ECHO_LIMIT)),
  keep(fields, name, value) {
    const nested = /^input_reference\[(file_id|image_url)\]$/.exec(name);
    if (nested) fields.input_reference = { [nested[1]]: value };
    else fields[name] = value;
  },
  budget: FORM_LIMIT,
  tooLarge: (param) => new LimitError(`a ${noun} request may carry at most 25 MiB`, 'request_too_large', param),
});

interface TaskRequest {
  fields: Record<string, unknown>;
  upload?: ReferenceInput;
  bytes: HeldBytes;
}

interface TaskPlan {
  routes: ModelRoute[];
  task: CompiledTask;
  params: TaskParams;
  request: TaskRequest;
  /** The submit document, mapped in the inputs stage (before anything is reserved). */
  document?: Record<string, unknown>;
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
function resolveTaskRoutes(call: Call, endpoint: TaskEndpoint, body: Record<string, unknown>): { routes: ModelRoute[]; tasks: Map<ModelRoute, CompiledTask> } {
  const { kind } = endpoint.family;
  const routes = resolveCallModel(call, body.model, kind);
  const tasks = new Map<ModelRoute, CompiledTask>();
  for (const route of routes) {
    const task = taskFor(call.config, route, { kind, route: endpoint.route });
    if (!task) throw new TranslationError(`model ${clientValue(route.model.id)} is served by channel "${route.channel.id}", which has no ${endpoint.route ? `${endpoint.route} route` : `${kind} task`}`, 'model');
    tasks.set(route, task);
  }
  return { routes, tasks };
}

/** read: a key has at most tasks.maxInFlightPerKey tasks unfinished (those being created count too); then JSON, or the SDK's form. */
async function readTaskRequest(services: TaskCreateDeps, endpoint: TaskEndpoint, call: Call): Promise<TaskRequest> {
  const creating = admitCreation(call.auth.keyId);
  call.holdUntilDone(creating.end);
  const bytes = new HeldBytes(bytesInFlight(call.config.gateway.server.referenceBytesInFlight));
  call.holdUntilDone(bytes.releaseUnlessSubmitted);
  const options = tasksOptions(call.config);
  if ((await countTasksInFlight(services.db, call.auth.keyId)) + creating.before >= options.maxInFlightPerKey) {
    throw new RateLimitError(`this key has ${options.maxInFlightPerKey} tasks unfinished, the most it may; try again when one finishes`, 5);
  }
  const parts = endpoint.form && call.parts();
  let fields = call.body;
  let upload: ReferenceInput | undefined;
  if (parts) {
    // Uploaded bytes are held against the process-wide budget as they arrive, until the task is submitted.
    const form = await readForm(parts, endpoint.form!, bytes.hold);
    fields = form.fields;
    const image = form.images[0];
    if (image) upload = { upload: { filename: image.filename, contentType: image.contentType, bytes: image.bytes } };
  }
  const validate = services.schemas.validator(endpoint.schema);
  if (!validate(fields)) throw schemaError(validate.errors![0]);
  return { fields, upload, bytes };
}

function resolveTask(call: Call, endpoint: TaskEndpoint, request: TaskRequest): TaskPlan {
  const body = request.fields;
  const { routes, tasks } = resolveTaskRoutes(call, endpoint, body);
  const route = routes[0];
  const params: TaskParams = { prompt: String(body.prompt) };
  if (body.seconds !== undefined) params.seconds = Number(body.seconds);
  if (typeof body.size === 'string') params.size = body.size;
  checkDeclaredSize(routes, params.size);
  const { bill } = endpoint.family;
  const reserved = reservedUnitsOf(route, bill, body);
  const field = typeof bill.reserve === 'number' ? undefined : bill.reserve.field;
  // What the request asks for is held to what the model makes (the most a result may then report).
  if (field !== undefined && reserved > mostUnitsOf(route, bill)) throw new ValidationError(`${field}=${reserved}: model ${clientValue(route.model.id)} makes at most ${mostUnitsOf(route, bill)} ${bill.unit}`, field);
  return { routes, task: tasks.get(route)!, params, request };
}

/** inputs: the reference image as the first route's submit operation takes it, then the submit document mapped. */
async function mapSubmit(call: Call, plan: TaskPlan): Promise<void> {
  const { task, params, request } = plan;
  const route = plan.routes[0];
  const body = request.fields;
  const reference = referenceOf(body, request.upload);
  // The submit operation `submit.choose` picks (stored on the task for the poll to follow), as its encoding takes the image.
  const named = reference && ('named' in reference ? reference.named : reference.upload.filename);
  const upstreamModel = route.model.upstream ?? route.model.id;
  const operation = submitOperation(task, route, { model: upstreamModel, body: { model: body.model, prompt: params.prompt, seconds: body.seconds ?? null, size: params.size ?? null, input_reference: named ?? null } });
  if (operation !== task.spec.submit.operation) params.operation = operation;
  const multipart = route.protocol.operations[operation]?.encoding === 'multipart' && !!task.spec.submit.reference;
  const inline = task.spec.submit.inline === true;
  const resolved = reference ? await resolveReference(call, reference, multipart || inline ? 'bytes' : 'url', FORM_LIMIT, request.bytes.hold) : {};
  // A JSON operation takes a URL: an uploaded image's bytes were refused above, nothing stays held.
  if (!resolved.image) request.bytes.release();
  // Every known field is present (null when not sent), so Liquid's `size` of an absent field is never a key count.
  const scopeBody = { model: body.model, prompt: params.prompt, seconds: body.seconds ?? null, size: params.size ?? null, input_reference: inline && resolved.image ? await inlineImage(resolved.image) : (resolved.url ?? null) };
  const document = { ...(task.request({ model: upstreamModel, body: scopeBody, operation }) as Record<string, unknown>) };
  if (resolved.image && task.spec.submit.reference) {
    document[task.spec.submit.reference] = new File([referenceBlob(resolved.image)], resolved.image.filename, { type: resolved.image.contentType });
  }
  plan.document = document;
}

/** The task's row: submitting, its charge, leased to this process while it submits. */
function taskRow(services: TaskCreateDeps, call: Call, family: TaskFamily, plan: TaskPlan, charge: Charge): TaskRow {
  const options = tasksOptions(call.config);
  const route = plan.routes[0];
  const now = Date.now();
  const submitMs = route.protocol.operations[plan.params.operation ?? plan.task.spec.submit.operation]?.deadlineMs ?? route.channel.timeouts.deadlineMs;
  return {
    id: newTaskId(family.idPrefix, now),
    workspace_id: call.auth.workspaceId,
    key_id: call.auth.keyId,
    object: family.object,
    task: plan.task.name,
    model: route.model.id,
    channel: route.channel.id,
    status: 'submitting',
    progress: null,
    params: JSON.stringify(plan.params),
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
    deadline_at: now + timeoutMsOf(options, plan.task.spec),
    next_poll_at: now,
    poll_attempts: 0,
    not_found_count: 0,
    // Held by this process while it submits; if it dies, another fails the task once this runs out (never submits twice).
    lease_owner: services.instanceId,
    lease_until: now + submitMs + options.leaseMs,
  };
}

/** The hand-over: the row is written and the submit starts in the background; the charge goes with the task. */
async function createTask(services: TaskCreateDeps, family: TaskFamily, call: Call, plan: TaskPlan, charge: Charge): Promise<unknown> {
  const row = taskRow(services, call, family, plan, charge);
  // The answer is made before the row exists: once it does, nothing may fail and release the charge the task holds.
  const answer = await toTaskObject(services, call.baseUrl(), row);
  await insertTask(services.db, row);
  const { bytes } = plan.request;
  services.tasks.submit({ row, routes: [plan.routes[0]], task: plan.task, document: plan.document!, done: bytes.release });
  bytes.submitted = true;
  return answer;
}

/** The flow of a task route: its catalogue entry declares the family (`pipeline.task`), the kind and the request schema. */
export function taskFlow(services: TaskCreateDeps, entry: EndpointConfig): Flow<TaskPlan, TaskRequest> {
  const family = taskFamilyOf(entry);
  if (!family || !entry.requestSchema) throw new Error(`endpoint "${entry.name}": flow "task" needs a modelKind, a requestSchema and a pipeline.task section`);
  const endpoint: TaskEndpoint = { family, route: family.routes === 'declared' ? entry.path : undefined, schema: entry.requestSchema, form: entry.multipart ? formRules(family.object.replace(/\.task$/, '')) : undefined };
  return {
    read: (call) => readTaskRequest(services, endpoint, call),
    resolve: (call, request) => resolveTask(call, endpoint, request),
    inputs: mapSubmit,
    // The worst case over the routes, held for the task's whole lifetime.
    estimate: (_call, plan) => Math.max(...plan.routes.map((r) => taskEstimateMicros(r, family.bill, reservedUnitsOf(r, family.bill, plan.request.fields), plan.params.size))),
    reservationMs: (call, plan) => timeoutMsOf(tasksOptions(call.config), plan.task.spec) + tasksOptions(call.config).leaseMs,
    handOver: (call, plan, charge) => createTask(services, family, call, plan, charge),
  };
}
