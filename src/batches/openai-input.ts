// An OpenAI batch's input file as lines: JSON objects `{custom_id, method: "POST", url, body}`, one a line, each within
// tasks.batches.maxLineBytes, all naming the batch's endpoint. A refusal is a 400 naming the line.
import { ValidationError, clientValue } from '../base/errors.js';
import type { InputLine } from './plan.js';

export interface InputLimits {
  maxLines: number;
  maxLineBytes: number;
}

export function parseInputFile(bytes: Buffer, endpoint: string, limits: InputLimits): InputLine[] {
  const lines: InputLine[] = [];
  let start = 0;
  for (let n = 1; start < bytes.length; n++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const raw = bytes.subarray(start, end);
    start = end + 1;
    const where = `line ${n}`;
    if (raw.length > limits.maxLineBytes) throw new ValidationError(`${where} is ${raw.length} bytes, over the ${limits.maxLineBytes}-byte limit of a batch line`, 'input_file_id', 'line_too_large');
    const text = raw.toString('utf8').trim();
    if (!text) continue;
    if (lines.length === limits.maxLines) throw new ValidationError(`the input has more than ${limits.maxLines} lines`, 'input_file_id', 'too_many_lines');
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      throw new ValidationError(`${where} is not JSON; each line of a batch's input is one JSON object`, 'input_file_id', 'invalid_jsonl');
    }
    if (!line || typeof line !== 'object' || Array.isArray(line)) throw new ValidationError(`${where} is not a JSON object`, 'input_file_id', 'invalid_jsonl');
    const { custom_id: customId, method, url, body, ...rest } = line as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw new ValidationError(`${where}: unknown field ${clientValue(unknown)}`, unknown.slice(0, 64));
    if (typeof customId !== 'string' || !customId || customId.length > 512) throw new ValidationError(`${where}: "custom_id" must be a string of 1 to 512 characters`, 'custom_id');
    if (method !== 'POST') throw new ValidationError(`${where}: "method" must be "POST"`, 'method');
    if (url !== endpoint) throw new ValidationError(`${where}: "url" is ${clientValue(url)}, but the batch's endpoint is ${endpoint}; every line goes to it`, 'url');
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError(`${where}: "body" must be a JSON object`, 'body');
    lines.push({ customId, body: body as Record<string, unknown>, where });
  }
  return lines;
}
