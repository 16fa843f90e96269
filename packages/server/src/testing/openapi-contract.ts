import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { RecordedResponse } from './record-responses.js';

// ajv-formats is CommonJS with a default export; under NodeNext its type is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;

export interface ContractReport {
  /** Responses matched to an operation and validated. */
  checked: number;
  /** Responses to paths or methods the document does not describe (e.g. the 404 of an unknown path). */
  unmatched: number;
  /** One line per response that disagrees with the document. */
  failures: string[];
  /** `METHOD /path status` of every validated response, for coverage checks. */
  seen: Set<string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function pointer(...segments: string[]): string {
  return segments.map((s) => s.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

function templateToRegExp(template: string): RegExp {
  const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{[^/]+?\\\}/g, '[^/]+');
  // trpc-to-openapi routes case-insensitively and ignores a trailing slash.
  return new RegExp(`^${escaped}/?$`, 'i');
}

/** Validates responses against an OpenAPI 3.1 document. */
export function createContractChecker(document: unknown) {
  const doc = structuredClone(document) as Json;
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  const routes = Object.keys(paths).map((template) => ({ template, pattern: templateToRegExp(template) }));
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const compiled = new Map<string, ValidateFunction>();

  const check = (records: Iterable<RecordedResponse>): ContractReport => {
    const report: ContractReport = { checked: 0, unmatched: 0, failures: [], seen: new Set() };
    for (const record of records) {
      const method = record.method.toLowerCase();
      const route = routes.find((r) => r.pattern.test(record.path));
      const operation = route ? (paths[route.template]?.[method] as Json | undefined) : undefined;
      if (!route || !operation || !METHODS.includes(method)) {
        report.unmatched += 1;
        continue;
      }
      const where = `${record.method} ${record.url ?? record.path} -> ${record.status}`;
      report.checked += 1;
      report.seen.add(`${record.method.toUpperCase()} ${route.template} ${record.status}`);
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      const statusKey = String(record.status);
      const key = [statusKey, `${statusKey[0]}XX`, 'default'].find((k) => Object.hasOwn(responses, k));
      const response = key === undefined ? undefined : responses[key];
      if (!response || key === undefined) {
        report.failures.push(
          `${where}: status ${record.status} is not documented (documented: ${Object.keys(responses).join(', ')}); body ${record.body.slice(0, 200)}`,
        );
        continue;
      }
      const content = response.content as Record<string, Json> | undefined;
      if (!content || Object.keys(content).length === 0) continue;
      const mediaType = (record.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!Object.hasOwn(content, mediaType)) {
        report.failures.push(
          `${where}: content type "${record.contentType}" is not one of ${Object.keys(content).join(', ')}`,
        );
        continue;
      }
      if (method === 'head' || record.contentEncoding) continue;
      if (!mediaType.endsWith('json')) continue;
      // NDJSON (the export) is text described line by line (`x-itemSchema`): each line is checked.
      const sequential = mediaType === 'application/x-ndjson';
      let bodies: unknown[];
      try {
        bodies = sequential
          ? record.body
              .split('\n')
              .filter((line) => line.trim() !== '')
              .map((line) => JSON.parse(line) as unknown)
          : [JSON.parse(record.body)];
      } catch {
        report.failures.push(`${where}: body is not JSON: ${record.body.slice(0, 200)}`);
        continue;
      }
      const field = sequential ? 'x-itemSchema' : 'schema';
      const ref = `openapi.json#/${pointer('paths', route.template, method, 'responses', key, 'content', mediaType, field)}`;
      let validate = compiled.get(ref);
      if (!validate) {
        validate = ajv.compile({ $ref: ref });
        compiled.set(ref, validate);
      }
      for (const body of bodies) {
        if (validate(body)) continue;
        const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
        report.failures.push(`${where}: body does not match the schema (${errors}): ${record.body.slice(0, 300)}`);
        break;
      }
    }
    return report;
  };
  return { check, operations: () => listOperations(doc) };
}

/** `METHOD /path` and documented statuses of every operation. */
export function listOperations(document: unknown): { method: string; path: string; statuses: string[] }[] {
  const paths = ((document as Json).paths ?? {}) as Record<string, Json>;
  const out: { method: string; path: string; statuses: string[] }[] = [];
  for (const [template, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation) {
        out.push({
          method: method.toUpperCase(),
          path: template,
          statuses: Object.keys((operation.responses ?? {}) as Json),
        });
      }
    }
  }
  return out;
}

/** Reads every `*.jsonl` file the harness wrote under `dir`. */
export function readRecordedResponses(dir: string): RecordedResponse[] {
  const records: RecordedResponse[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n')) {
      if (line.trim()) records.push(JSON.parse(line) as RecordedResponse);
    }
  }
  return records;
}
