// The image dialect (generations and edits): resolve, estimate n x the priciest image asked for, send, archive every result,
// settle per image (run.ts sends, and settles failures). Edits read their multipart form first and fetch their image_url references in the inputs stage.
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import { declaredSizes, imagePriceMicros } from '../billing/image-price.js';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import { UnsupportedMediaError, ValidationError } from '../base/errors.js';
import { holdForCall, readImageForm, resolveImageReference, type FormImage, type ImageForm } from '../pipeline/image-form.js';
import { schemaError } from '../http/schema-error.js';
import type { ChatTranslator } from '../engine/translator.js';
import { imagesTranslateContext, imagesTranslatorFor } from './images-translated.js';
import type { Call } from '../pipeline/call.js';
import { readJsonObject } from '../pipeline/decode.js';
import type { Flow } from '../pipeline/flow.js';
import { archiveOutputs } from '../pipeline/outputs.js';
import type { Outgoing, Sent } from '../pipeline/send.js';
import { upstreamMalformed, usageReaderFor } from '../pipeline/usage.js';
import { reportedCounts } from '../pipeline/settle.js';

const DEFAULT_MAX_IMAGES = 10;

interface ImagesPlan {
  routes: ModelRoute[];
  /** Per route, the declared translation its requests go through; none for a pass-through. */
  translators: Map<ModelRoute, ChatTranslator | undefined>;
  count: number;
  /** The request's fields: its JSON body, or an edit form's text fields. */
  fields: Record<string, unknown>;
  /** Edits: the form's fields and images (files, then fetched references). */
  form?: ImageForm;
}

/** An edit request carries at most this many bytes, files and URL references together. */
export const EDIT_REQUEST_LIMIT = 25 * 1024 * 1024;

const maxImagesOf = (route: ModelRoute) => Number((route.model.media as { maxImages?: number } | undefined)?.maxImages ?? DEFAULT_MAX_IMAGES);

/** What `count` images (and any reported tokens) cost on `route`; unknown sizes or qualities take the priciest. */
function imagesCostMicros(route: ModelRoute, count: number, size: unknown, quality: unknown, tokens?: { inputTokens: number; outputTokens: number }): number {
  const each = imagePriceMicros(route.model.price, typeof size === 'string' ? size : undefined, typeof quality === 'string' ? quality : undefined);
  return count * each + tokenCostMicros(route.model.price, tokens ?? { inputTokens: 0, outputTokens: 0 });
}

/** A model that declares the sizes it makes refuses any other (a size it does not list is never priced by a guess). */
export function checkDeclaredSize(routes: readonly ModelRoute[], size: unknown): void {
  if (typeof size !== 'string' || size === 'auto') return;
  for (const route of routes) {
    const sizes = declaredSizes(route.model.media);
    if (sizes && !sizes.includes(size)) throw new ValidationError(`size ${JSON.stringify(size.slice(0, 32))}: model "${route.model.id}" makes ${sizes.join(', ')}`, 'size', 'unsupported_size');
  }
}

/** Blobs for the multipart body: several images travel as `image[]`, one as `image`, the mask as `mask`. */
function formDocument(form: ImageForm, model: string): Record<string, unknown> {
  const { image_url: _references, ...fields } = form.fields;
  const blob = (i: FormImage) => new File([new Uint8Array(i.bytes)], i.filename, { type: i.contentType });
  const images = form.images.filter((i) => i.field === 'image').map(blob);
  const mask = form.images.find((i) => i.field === 'mask');
  return { ...fields, model, ...(images.length > 1 ? { 'image[]': images } : { image: images[0] }), ...(mask ? { mask: blob(mask) } : {}) };
}

/** read (edits): the multipart form, checked against the edit request's schema. */
async function readEditForm(call: Call): Promise<ImageForm> {
  const parts = call.parts();
  if (!parts) throw new UnsupportedMediaError('send multipart/form-data: "image" (or "image[]") files and/or "image_url", "prompt", "model"');
  const form = await readImageForm(parts, EDIT_REQUEST_LIMIT, holdForCall(call));
  const validate = call.services.schemas.validator('requests/images-edits');
  if (!validate(form.fields)) throw schemaError(validate.errors![0]);
  return form;
}

function resolveImages(call: Call, operation: string, kind: string, form: ImageForm | undefined): ImagesPlan {
  const fields = form ? form.fields : call.body;
  const routes = resolveCallModel(call, fields.model, kind);
  const translators = new Map(routes.map((route) => [route, imagesTranslatorFor(call.config, call.dialect, route, operation, !!form)]));
  const count = fields.n === undefined || fields.n === null ? 1 : Number(fields.n);
  const max = Math.min(...routes.map(maxImagesOf));
  if (count > max) throw new ValidationError(`n=${count}: model "${routes[0].model.id}" makes at most ${max} images per request`, 'n');
  checkDeclaredSize(routes, fields.size);
  return { routes, translators, count, fields, form };
}

/** inputs (edits): each image_url (an https URL through the SSRF guard, or a file of this workspace) becomes an image part. */
async function fetchReferences(call: Call, plan: ImagesPlan): Promise<void> {
  if (!plan.form) return;
  for (const reference of (plan.form.fields.image_url as string[] | undefined) ?? []) {
    const image = await resolveImageReference(call, reference, EDIT_REQUEST_LIMIT - plan.form.used);
    plan.form.used += image.bytes.length;
    plan.form.images.push(image);
  }
  if (!plan.form.images.some((i) => i.field === 'image')) throw new ValidationError('send at least one image: an "image" file or an "image_url"', 'image');
}

/** map request: a declared translation, the edit form (model mapped), or the JSON body with the model mapped. */
function imagesRequest(call: Call, operation: string, plan: ImagesPlan, route: ModelRoute): Outgoing {
  const { fields } = plan;
  const model = route.model.upstream ?? route.model.id;
  const translator = plan.translators.get(route);
  if (translator) return { operation: translator.operation, document: translator.request(fields, imagesTranslateContext(route, fields, call.requestId)) };
  return { operation, document: plan.form ? formDocument(plan.form, model) : { ...fields, model } };
}

/** decode, outputs (every result archived or marked failed before the answer is sent) and settle per image made. */
async function imagesAnswer(call: Call, operation: string, plan: ImagesPlan, sent: Sent, charge: Charge): Promise<unknown> {
  const { fields } = plan;
  const translator = plan.translators.get(sent.route);
  const upstream = await readJsonObject(sent);
  // Tokens past the model's limits for the images asked for (else the default bound, widened to the request's bytes) are impossible.
  const usage = usageReaderFor(call.config, sent, translator?.operation ?? operation, plan.count, undefined, { bytes: call.bodyBytes });
  usage.fromAnswer(upstream);
  const tokens = await reportedCounts(call, charge, sent.route, usage);
  // A translated answer is the OpenAI images answer the protocol's mapping makes of the vendor's.
  const answer = translator ? translator.response(upstream, imagesTranslateContext(sent.route, fields, call.requestId, () => tokens)) : upstream;
  if (!Array.isArray(answer.data)) throw upstreamMalformed(sent.route.channel.id, 'its answer has no "data" list');
  if (answer.data.length > plan.count) throw upstreamMalformed(sent.route.channel.id, `it made ${answer.data.length} images where ${plan.count} were asked for`);
  await archiveOutputs(call, translator ? translator.outputs?.answer : sent.operation.outputs?.answer, answer, undefined, fields.model);
  // Per image made, at the size and quality the upstream reports, else the ones asked for.
  const costMicros = imagesCostMicros(sent.route, answer.data.length, answer.size ?? fields.size, answer.quality ?? fields.quality, tokens);
  const outcome = await charge.settle({ costMicros, units: answer.data.length, inputTokens: tokens?.inputTokens, outputTokens: tokens?.outputTokens, route: sent.route });
  return { ...answer, cost: renderCost({ micros: outcome.chargedMicros, currency: sent.route.model.price.currency }) };
}

export function imagesFlow(operation: string, kind: string, options: { form?: boolean } = {}): Flow<ImagesPlan, ImageForm | undefined> {
  return {
    read: options.form ? readEditForm : undefined,
    resolve: (call, form) => resolveImages(call, operation, kind, form),
    inputs: fetchReferences,
    // The worst case: n images at the priciest size and quality the request allows, on the priciest route.
    estimate: (_call, plan) => Math.max(...plan.routes.map((route) => imagesCostMicros(route, plan.count, plan.fields.size, plan.fields.quality))),
    request: (call, plan, route) => imagesRequest(call, operation, plan, route),
    answer: (call, plan, sent, charge) => imagesAnswer(call, operation, plan, sent, charge),
  };
}
