// The parts of a multipart request, each one named: a part without a name (or with an empty one) is a 400 that says so,
// on every multipart route, before any handler reads it.
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../base/errors.js';

export async function* namedParts(req: FastifyRequest): AsyncGenerator<Multipart> {
  for await (const part of req.parts() as AsyncIterable<Multipart>) {
    if (typeof part.fieldname !== 'string' || part.fieldname === '') {
      throw new ValidationError('every multipart part needs a name (Content-Disposition: form-data; name="...")', null, 'unnamed_part');
    }
    yield part;
  }
}
