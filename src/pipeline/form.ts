// The one multipart reader of the billed routes (image edits, task creation): text fields the route lists, and image files
// under the names it takes, all within one byte budget for the whole request; each file's type is read from its bytes.
import { clientValue, ECHO_LIMIT, UnsupportedMediaError, ValidationError } from '../base/errors.js';
import { sniffContentType, SNIFF_BYTES } from '../http/sniff.js';
import { readCapped } from '../net/read-capped.js';

/** One part of a multipart request as the transport's reader yields it, named (a file part streams its bytes). */
export type FormPart =
  | { type: 'file'; fieldname: string; filename?: string; mimetype?: string; file: AsyncIterable<Buffer> }
  | { type: 'field'; fieldname: string; value: unknown };

export interface FormImage {
  /** The name the route keeps the file under (`image[]` is kept as `image`). */
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** What a form holds once read: its fields and its image files, and the bytes they used. */
export interface ImageForm {
  fields: Record<string, unknown>;
  images: FormImage[];
  /** Bytes the request has used so far; references fetched later must fit in what is left. */
  used: number;
}

/** What a route takes in its form. */
export interface FormRules {
  /** The text fields it takes; any other is a 400 naming it. */
  fields: ReadonlySet<string>;
  /** The name a file part is kept under, or the error refusing it (given the files read so far). */
  file(fieldname: string, images: readonly FormImage[]): string | Error;
  /** Keeps a text field in `fields` (a list, a number, a nested object); plain text when absent. */
  keep?(fields: Record<string, unknown>, name: string, value: string): void;
  /** The most bytes the whole request may carry, files and fields together. */
  budget: number;
  /** The error once the request passes its budget (`param` names the file being read, if one was). */
  tooLarge(param?: string): Error;
}

/** Reads `parts` by `rules`; each file's bytes are `hold`-ed as they arrive (the in-flight budget). */
export async function readForm(parts: AsyncIterable<FormPart>, rules: FormRules, hold?: (bytes: number) => void): Promise<ImageForm> {
  const form: ImageForm = { fields: {}, images: [], used: 0 };
  for await (const part of parts) {
    if (part.type === 'file') {
      const field = rules.file(part.fieldname, form.images);
      if (field instanceof Error) throw field;
      const bytes = await readCapped(part.file, rules.budget, () => rules.tooLarge(field), { used: form.used, hold });
      form.used += bytes.length;
      const contentType = await sniffContentType(bytes.subarray(0, SNIFF_BYTES));
      const named = part.filename ? `${field} ${clientValue(part.filename)}` : field;
      if (!contentType?.startsWith('image/')) throw new UnsupportedMediaError(`${named} is not a PNG, JPEG, WebP or GIF image (the type is read from its bytes)`, field);
      form.images.push({ field, filename: part.filename || `${field}.png`, contentType, bytes });
      continue;
    }
    if (!rules.fields.has(part.fieldname)) throw new ValidationError(`unknown field ${clientValue(part.fieldname)}`, part.fieldname.slice(0, ECHO_LIMIT));
    const value = String(part.value);
    form.used += Buffer.byteLength(value);
    if (form.used > rules.budget) throw rules.tooLarge();
    if (rules.keep) rules.keep(form.fields, part.fieldname, value);
    else form.fields[part.fieldname] = value;
  }
  return form;
}
