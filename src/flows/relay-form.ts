// A relayed family's multipart form: its file fields (as the entry names them, kept with their file names, which vendors
// read the format from) and its text fields (a repeated name becomes a list), within one byte budget for the whole form.
import { clientValue, ECHO_LIMIT, LimitError, UnsupportedMediaError, ValidationError } from '../base/errors.js';
import type { Call } from '../pipeline/call.js';
import { holdForCall } from '../pipeline/image-form.js';
import { readCapped } from '../net/read-capped.js';
import { audioSeconds } from './audio-duration.js';
import type { PipelineSpec } from './spec.js';

/** 25 MiB: what a relayed form may carry when its entry says nothing (OpenAI's audio upload limit). */
const DEFAULT_FORM_BYTES = 25 * 1024 * 1024;

export interface RelayFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface RelayForm {
  fields: Record<string, unknown>;
  files: RelayFile[];
  /** Bytes the form carried, files and fields together. */
  used: number;
  /** Seconds of audio in the file `pipeline.durationOf` names, as measured; undefined when it could not be read. */
  seconds?: number;
}

export async function readRelayForm(call: Call, spec: PipelineSpec): Promise<RelayForm> {
  const parts = call.parts();
  const fileFields = spec.files ?? [];
  if (!parts) throw new UnsupportedMediaError(`send multipart/form-data${fileFields.length ? ` with the file field(s) ${fileFields.join(', ')}` : ''}`);
  const budget = spec.maxRequestBytes ?? DEFAULT_FORM_BYTES;
  const tooLarge = () => new LimitError(`this request may carry at most ${budget} bytes, files and fields together`, 'request_too_large');
  const form: RelayForm = { fields: {}, files: [], used: 0 };
  const hold = holdForCall(call);
  for await (const part of parts) {
    if (part.type === 'file') {
      if (!fileFields.includes(part.fieldname)) throw new ValidationError(`unexpected file field ${clientValue(part.fieldname)}; files go in ${fileFields.join(', ') || 'no field'}`, part.fieldname.slice(0, ECHO_LIMIT));
      const bytes = await readCapped(part.file, budget, tooLarge, { used: form.used, hold });
      form.used += bytes.length;
      form.files.push({ field: part.fieldname, filename: part.filename || part.fieldname, contentType: part.mimetype || 'application/octet-stream', bytes });
      continue;
    }
    const value = String(part.value);
    form.used += Buffer.byteLength(value) + Buffer.byteLength(part.fieldname);
    if (form.used > budget) throw tooLarge();
    const known = form.fields[part.fieldname];
    form.fields[part.fieldname] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
  }
  for (const field of fileFields) if (!form.files.some((f) => f.field === field)) throw new ValidationError(`"${field}" is required: send it as a file part`, field);
  const audio = spec.durationOf ? form.files.find((f) => f.field === spec.durationOf) : undefined;
  if (audio) form.seconds = await audioSeconds(audio.bytes, audio.filename, audio.contentType);
  return form;
}
