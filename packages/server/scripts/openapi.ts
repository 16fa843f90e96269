// Writes the OpenAPI document the server serves at /openapi.json, built from the app without a
// server or database: `pnpm --filter @partner/server openapi:dump [file]` (stdout without a file).
// `pnpm lint:openapi` (root) dumps it to .ci/artifacts/openapi.json and lints it with Redocly.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document.js';

const target = process.argv[2];
const json = `${JSON.stringify(buildOpenApiDocument(process.env.PUBLIC_BASE_URL || undefined), null, 2)}\n`;
if (target) {
  const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), target);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, json);
  process.stderr.write(`openapi: wrote ${path.relative(process.cwd(), file)}\n`);
} else {
  process.stdout.write(json);
}
