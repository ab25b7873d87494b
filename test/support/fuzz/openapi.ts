/**
 * The operations of the running server, read from its /openapi.json: method, path template,
 * parameters and body schema, in the subset of JSON Schema the zod transform emits.
 */

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  description?: string;
  /** OpenAPI 3.0: a boolean beside minimum / maximum */
  exclusiveMinimum?: boolean | number;
  exclusiveMaximum?: boolean | number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  not?: JsonSchema;
  default?: unknown;
  /** only a value the server issued is accepted (a cursor): a generator leaves it out */
  'x-opaque'?: boolean;
}

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
  /** an object parameter with style form and explode: its properties are the query's keys */
  style?: string;
  explode?: boolean;
}

/** A documented answer: its error body schema names the codes it carries. */
export interface DocResponse {
  content?: Record<string, { schema?: JsonSchema }>;
}

export interface ApiOperation {
  /** `POST /v1/ownerships/{id}/heartbeat` */
  key: string;
  method: string;
  path: string;
  pathParams: Param[];
  query: Param[];
  body: JsonSchema | null;
  secured: boolean;
  headers: Param[];
  /** by status */
  responses: Record<string, DocResponse>;
}

interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Param[];
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        security?: unknown[];
        responses?: Record<string, DocResponse>;
      }
    >
  >;
}

export function operationsOf(doc: unknown): ApiOperation[] {
  const d = doc as OpenApiDoc;
  if (!d || typeof d !== 'object' || !d.paths) throw new Error('not an OpenAPI document');
  const ops: ApiOperation[] = [];
  for (const [p, methods] of Object.entries(d.paths)) {
    for (const [m, o] of Object.entries(methods)) {
      const params = o.parameters ?? [];
      ops.push({
        key: `${m.toUpperCase()} ${p}`,
        method: m.toUpperCase(),
        path: p,
        pathParams: params.filter((x) => x.in === 'path'),
        query: params.filter((x) => x.in === 'query'),
        body: o.requestBody?.content?.['application/json']?.schema ?? null,
        secured: Array.isArray(o.security) && o.security.length > 0,
        headers: params.filter((x) => x.in === 'header'),
        responses: o.responses ?? {},
      });
    }
  }
  return ops;
}

/** The object schema's required property names. */
export function requiredOf(s: JsonSchema | undefined): string[] {
  return s?.required ?? [];
}
