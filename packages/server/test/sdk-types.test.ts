import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/document.js';

/**
 * The SDK's public types against the types a generator makes from the OpenAPI document
 * (openapi-typescript, a tool we did not write): the SDK's pagination is assignable to the
 * documented envelopes, and each documented 2xx body is readable as the SDK's type. Checked by
 * `tsc` on a generated file, with one deliberately wrong assignment that must fail (so the check
 * cannot pass vacuously).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SDK = path.join(ROOT, 'packages/sdk/src/index.js');
const run = promisify(execFile);

const CHECK = `
import type { components } from './openapi.js';
import type * as Sdk from ${JSON.stringify(SDK)};
import type { NormalizedPagination } from ${JSON.stringify(path.join(ROOT, 'packages/shared-schemas/src/normalize.js'))};

type S = components['schemas'];
type Json<T> = T extends object ? { [K in keyof T]: T[K] } : T;

// The SDK's public pagination is assignable to the document's envelopes.
export const merchantsPagination = (p: Sdk.PaginationInfo): S['Pagination'] => p;
export const eventsPagination = (p: Sdk.PaginationInfo): S['EventsPagination'] => p;
// The normaliser's shape (totals may be null) is not: the check can fail.
// @ts-expect-error totalItems: number | null is not number
export const notAssignable = (p: NormalizedPagination): S['Pagination'] => p;

// Documented 2xx bodies read as the SDK's types.
export const merchant = (m: S['Merchant']): Sdk.Merchant => m;
export const created = (m: S['CreateMerchantResponse']): Sdk.MerchantCreateResponse => m;
export const generated = (t: S['GenerateTagResponse']): Sdk.TagGenerateResponse => t;
export const verified = (t: S['VerifyTagResponse']): Sdk.TagVerifyResponse => t;
export const snippet = (t: S['TagSnippetResponse']): Sdk.TagSnippet => t;
export const event = (e: S['TrackingEvent']): Sdk.TrackingEvent => e;
export const streamed = (e: S['StreamedEvent']): Sdk.StreamedEvent => e;
export const accepted = (r: S['CollectResponse']): Sdk.EventSendResponse['accepted'] => r.accepted;
export const code = (c: S['ErrorCode']): Sdk.ErrorCode => c;
export type _ = Json<S['Error']>;
`;

describe('SDK types against openapi-typescript types of the document', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sdk-types-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('type-checks (tsc)', async () => {
    const ast = await openapiTS(buildOpenApiDocument() as never);
    writeFileSync(path.join(dir, 'openapi.ts'), astToString(ast));
    writeFileSync(path.join(dir, 'check.ts'), CHECK);
    writeFileSync(path.join(dir, 'sdk-version.d.ts'), 'declare const __SDK_VERSION__: string;\n');
    const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
    const args = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--exactOptionalPropertyTypes',
      '--target',
      'es2022',
      '--lib',
      'es2022,dom',
      '--module',
      'preserve',
      '--moduleResolution',
      'bundler',
      '--types',
      'node',
      '--typeRoots',
      path.join(ROOT, 'packages/server/node_modules/@types'),
      path.join(dir, 'check.ts'),
    ];
    const result = await run(tsc, args, { cwd: dir }).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${error.stdout}${error.stderr}` }),
    );
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 120_000);
});
