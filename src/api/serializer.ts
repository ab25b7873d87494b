import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { compileCheck } from '../domain/check';

type SerializerCompiler = typeof zodSerializerCompiler;

/**
 * Response serialization: every answer is still checked against its route's schema before it
 * leaves (a field the schema does not name never reaches a caller), but by the plain validator
 * compiled from that schema (src/domain/check.ts) rather than by zod's encode, which cost about a
 * tenth of a lookup's time (bench: HTTP lookup against a bare node:http server). A schema the
 * compiler cannot take (a union, a pipe, a non-strict object) is serialized by zod as before; so is
 * an answer the plain check refuses, so zod's verdict and its error are the ones that count. A
 * schema it compiles has no transform, so the answer is written as it is either way.
 */
export const serializerCompiler: SerializerCompiler = (route) => {
  const viaZod = zodSerializerCompiler(route);
  const schema = route.schema as z.ZodType;
  let accepts: ((x: unknown) => boolean) | null;
  try {
    accepts = compileCheck(schema);
  } catch {
    accepts = null;
  }
  if (accepts === null) return viaZod;
  const check = accepts;
  return (data) => (check(data) ? JSON.stringify(data) : viaZod(data));
};
