// A fake vendor batch API on the fake upstream, following the vendors' references: OpenAI's Files + Batch API
// (POST /v1/files multipart purpose=batch, POST /v1/batches, GET /v1/batches/{id} moving validating -> in_progress ->
// completed, GET /v1/files/{id}/content as JSONL, POST /v1/batches/{id}/cancel, DELETE /v1/files/{id}) and Anthropic's
// Message Batches (POST /v1/messages/batches, GET .../{id} in_progress -> ended, GET .../{id}/results,
// POST .../{id}/cancel, DELETE .../{id} of an ended batch).
// Each request is answered by echoing its last user message, 12 input and 7 output tokens; one whose message contains
// REFUSE is answered 400 (OpenAI: in the error file; Anthropic: errored).
import type { RecordedRequest, Route } from './fake-upstream.js';
import { json } from './fake-http.js';

interface FakeBatch {
  id: string;
  kind: 'openai' | 'anthropic';
  /** What the batch was created with. */
  created: Record<string, unknown>;
  requests: { custom_id: string; body: any }[];
  polls: number;
  cancelled: boolean;
  outcome: 'complete' | 'fail';
  status: string;
  files: { output?: string; errors?: string };
}

const said = (body: any) => {
  const content = body?.messages?.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};

function chatAnswer(custom_id: string, body: any, n: number) {
  if (said(body).includes('REFUSE')) return { id: `batch_req_${n}`, custom_id, response: { status_code: 400, request_id: `req_${n}`, body: { error: { message: 'refused by the fake vendor', type: 'invalid_request_error', param: null, code: null } } }, error: null };
  const completion = { id: `chatcmpl-${n}`, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: `echo ${said(body)}` }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } };
  return { id: `batch_req_${n}`, custom_id, response: { status_code: 200, request_id: `req_${n}`, body: completion }, error: null };
}

function messageResult(custom_id: string, params: any) {
  if (said(params).includes('REFUSE')) return { custom_id, result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'refused by the fake vendor' } } } };
  const message = { id: `msg_${custom_id}`, type: 'message', role: 'assistant', model: params.model, content: [{ type: 'text', text: `echo ${said(params)}` }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 7 } };
  return { custom_id, result: { type: 'succeeded', message } };
}

const jsonl = (items: unknown[]) => (items.length ? items.map((i) => JSON.stringify(i)).join('\n') + '\n' : undefined);

export class FakeBatchApis {
  /** Uploaded files by id: their purpose, name and text. */
  readonly files = new Map<string, { purpose: string; filename: string; text: string }>();
  readonly batches = new Map<string, FakeBatch>();
  /** What was deleted, in order: file ids (OpenAI) and batch ids (Anthropic). */
  readonly deleted: string[] = [];
  /** Deleted files, kept so a test that rewinds the gateway to before a batch's end can put them back (restore). */
  private readonly trash = new Map<string, { purpose: string; filename: string; text: string }>();
  /** When set, every delete answers 500 (a vendor that cannot delete now). */
  deleteFails = false;

  /** Puts back every file deleted so far. */
  restore(): void {
    for (const [id, file] of this.trash) this.files.set(id, file);
    this.trash.clear();
  }
  /** What the next batch made does: completes, or fails as a whole (OpenAI's `failed`). */
  outcome: 'complete' | 'fail' = 'complete';
  private seq = 0;

  /** The fake's routes, for FakeUpstream.route. */
  readonly route: Route = async (req, res) => {
    const openai = await this.openai(req);
    const answer = openai ?? this.anthropic(req);
    if (!answer) return false;
    if (typeof answer.body === 'string') {
      res.writeHead(answer.status, { 'content-type': 'application/binary' });
      res.end(answer.body);
    } else json(res, answer.status, answer.body);
    return true;
  };

  private async openai(req: RecordedRequest): Promise<{ status: number; body: unknown } | undefined> {
    const { method, path } = req;
    if (method === 'POST' && path === '/v1/files') {
      const form = await new Request('http://fake/v1/files', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: new Uint8Array(req.raw) }).formData();
      const file = form.get('file') as File;
      const id = `file-${++this.seq}`;
      this.files.set(id, { purpose: String(form.get('purpose')), filename: file.name, text: await file.text() });
      return { status: 200, body: { id, object: 'file', bytes: file.size, created_at: 1, filename: file.name, purpose: form.get('purpose') } };
    }
    if (method === 'POST' && path === '/v1/batches') {
      const input = this.files.get(req.body.input_file_id);
      if (!input) return { status: 400, body: { error: { message: 'no such file', type: 'invalid_request_error' } } };
      const requests = input.text.trim().split('\n').map((l) => JSON.parse(l));
      return { status: 200, body: this.view(this.make('openai', req.body, requests, 'validating')) };
    }
    const deleted = /^\/v1\/files\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && deleted) {
      // https://platform.openai.com/docs/api-reference/files/delete
      if (this.deleteFails) return { status: 500, body: { error: { message: 'The server had an error while processing your request.', type: 'server_error' } } };
      const gone = this.files.get(deleted[1]);
      if (gone) this.trash.set(deleted[1], gone);
      if (!this.files.delete(deleted[1])) return { status: 404, body: { error: { message: `No such File object: ${deleted[1]}`, type: 'invalid_request_error', param: 'id', code: null } } };
      this.deleted.push(deleted[1]);
      return { status: 200, body: { id: deleted[1], object: 'file', deleted: true } };
    }
    const file = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && file) {
      const text = this.files.get(file[1])?.text;
      return text === undefined ? { status: 404, body: { error: { message: 'no such file' } } } : { status: 200, body: text };
    }
    const batch = /^\/v1\/batches\/([^/]+?)(\/cancel)?$/.exec(path);
    if (!batch || !this.batches.has(batch[1])) return undefined;
    const found = this.batches.get(batch[1])!;
    if (batch[2]) found.cancelled = true;
    else this.advance(found);
    return { status: 200, body: this.view(found) };
  }

  private anthropic(req: RecordedRequest): { status: number; body: unknown } | undefined {
    const { method, path } = req;
    if (method === 'POST' && path === '/v1/messages/batches') {
      const requests = (req.body.requests as { custom_id: string; params: unknown }[]).map((r) => ({ custom_id: r.custom_id, body: r.params }));
      return { status: 200, body: this.view(this.make('anthropic', req.body, requests, 'in_progress')) };
    }
    const batch = /^\/v1\/messages\/batches\/([^/]+?)(\/cancel|\/results)?$/.exec(path);
    if (!batch || !this.batches.has(batch[1])) return undefined;
    const found = this.batches.get(batch[1])!;
    if (method === 'DELETE' && !batch[2]) {
      // https://docs.anthropic.com/en/api/deleting-message-batches: only a batch that ended.
      if (this.deleteFails) return { status: 500, body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } };
      if (found.status !== 'ended') return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'a batch can be deleted once it ended' } } };
      this.batches.delete(found.id);
      this.deleted.push(found.id);
      return { status: 200, body: { id: found.id, type: 'message_batch_deleted' } };
    }
    if (batch[2] === '/results') return { status: 200, body: found.files.output ?? '' };
    if (batch[2] === '/cancel') found.cancelled = true;
    else this.advance(found);
    return { status: 200, body: this.view(found) };
  }

  private make(kind: FakeBatch['kind'], created: Record<string, unknown>, requests: FakeBatch['requests'], status: string): FakeBatch {
    const id = kind === 'openai' ? `batch_vendor${++this.seq}` : `msgbatch_vendor${++this.seq}`;
    const batch: FakeBatch = { id, kind, created, requests, polls: 0, cancelled: false, outcome: this.outcome, status, files: {} };
    this.batches.set(id, batch);
    return batch;
  }

  /** A poll moves the batch on: validating, in progress, then ended (completed, failed, or cancelled with its first request answered). */
  private advance(batch: FakeBatch): void {
    batch.polls++;
    if (['completed', 'failed', 'cancelled', 'ended'].includes(batch.status)) return;
    if (batch.polls < 2 && !batch.cancelled) {
      batch.status = 'in_progress';
      return;
    }
    if (batch.outcome === 'fail') {
      batch.status = 'failed';
      return;
    }
    const answered = batch.cancelled ? batch.requests.slice(0, 1) : batch.requests;
    if (batch.kind === 'anthropic') {
      batch.status = 'ended';
      batch.files.output = jsonl(batch.requests.map((r, i) => (i < answered.length ? messageResult(r.custom_id, r.body) : { custom_id: r.custom_id, result: { type: 'canceled' } })));
      return;
    }
    batch.status = batch.cancelled ? 'cancelled' : 'completed';
    const results = answered.map((r, i) => chatAnswer(r.custom_id, r.body, i));
    const store = (items: unknown[]) => {
      const text = jsonl(items);
      if (text === undefined) return undefined;
      const id = `file-${++this.seq}`;
      this.files.set(id, { purpose: 'batch_output', filename: `${batch.id}.jsonl`, text });
      return id;
    };
    batch.files.output = store(results.filter((r) => r.response.status_code === 200));
    batch.files.errors = store(results.filter((r) => r.response.status_code !== 200));
  }

  private view(batch: FakeBatch): unknown {
    if (batch.kind === 'anthropic') {
      return { id: batch.id, type: 'message_batch', processing_status: batch.status === 'ended' ? 'ended' : batch.cancelled ? 'canceling' : 'in_progress', request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 }, results_url: null };
    }
    const errors = batch.status === 'failed' ? { object: 'list', data: [{ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', line: 1, param: null }] } : null;
    return { id: batch.id, object: 'batch', endpoint: batch.created.endpoint, input_file_id: batch.created.input_file_id, completion_window: '24h', status: batch.cancelled && batch.status === 'in_progress' ? 'cancelling' : batch.status, output_file_id: batch.files.output ?? null, error_file_id: batch.files.errors ?? null, errors, metadata: batch.created.metadata ?? null };
  }
}
