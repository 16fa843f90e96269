import { z } from 'zod';

/** Media-type examples synthesised from the document's own schemas. */

type Json = Record<string, unknown>;

const FORMAT_EXAMPLES: Record<string, unknown> = {
  uuid: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
  'date-time': '2026-11-22T10:00:00.000Z',
  date: '2026-11-22',
  uri: 'https://shop.example.com/',
  url: 'https://shop.example.com/',
  email: 'ops@example.com',
  hostname: 'shop.example.com',
};

function resolveRef(ref: string, root: Json): Json | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const segment of ref.slice(2).split('/')) {
    const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
    node = node && typeof node === 'object' ? (node as Json)[key] : undefined;
  }
  return node && typeof node === 'object' ? (node as Json) : undefined;
}

/** An example value for `schema` (a JSON Schema inside the document `root`). */
export function exampleFor(schema: unknown, root: Json, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 12) return {};
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(s.$ref, root);
    return target ? exampleFor(target, root, depth + 1) : {};
  }
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((part) => exampleFor(part, root, depth + 1));
    if (parts.every((part) => part && typeof part === 'object' && !Array.isArray(part))) {
      return Object.assign({}, ...parts);
    }
    return parts[0];
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return exampleFor(options[0], root, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [name, property] of Object.entries((s.properties ?? {}) as Json)) {
        if ((property as Json)['x-omit-from-example'] === true) continue;
        out[name] = exampleFor(property, root, depth + 1);
      }
      return out;
    }
    case 'array': {
      const count = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 1);
      return Array.from({ length: count }, () => exampleFor(s.items, root, depth + 1));
    }
    case 'string':
      return typeof s.format === 'string' && s.format in FORMAT_EXAMPLES ? FORMAT_EXAMPLES[s.format] : 'string';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 1) : 1;
    case 'boolean':
      return true;
    default:
      return {};
  }
}

/** A zod schema as a component. */
export function componentSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  const defs = json.$defs as Record<string, Record<string, unknown>> | undefined;
  const ref = typeof json.$ref === 'string' ? /^#\/\$defs\/([^/]+)$/.exec(json.$ref)?.[1] : undefined;
  const out = { ...(ref && defs?.[ref] && Object.keys(defs).length === 1 ? defs[ref] : json) };
  delete out.$schema;
  delete out.id;
  return out;
}
