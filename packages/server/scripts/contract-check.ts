// Validates every REST response the test suite received against the OpenAPI document:
//   RECORD_RESPONSES=<dir> pnpm test && pnpm --filter @partner/server contract:check <dir>
// (.ci/run does this on both databases). Exits 1 listing each response that drifted, and each
// documented operation no test reached unless `--partial` (a run of part of the suite).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../src/openapi/document.js';
import { createContractChecker, readRecordedResponses } from '../src/testing/openapi-contract.js';

const partial = process.argv.includes('--partial');
const dir = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? process.env.RECORD_RESPONSES;
if (!dir) {
  process.stderr.write('usage: contract:check <dir written by RECORD_RESPONSES=<dir> pnpm test>\n');
  process.exit(2);
}
const absolute = path.resolve(process.env.INIT_CWD ?? process.cwd(), dir);
if (!existsSync(absolute)) {
  process.stderr.write(`contract:check: ${absolute} does not exist (run the tests with RECORD_RESPONSES first)\n`);
  process.exit(2);
}
const records = readRecordedResponses(absolute);
const checker = createContractChecker(buildOpenApiDocument('http://127.0.0.1'));
const report = checker.check(records);
const operations = checker.operations();
const reached = operations.filter((op) => [...report.seen].some((s) => s.startsWith(`${op.method} ${op.path} `)));
process.stdout.write(
  `contract:check: ${records.length} recorded REST responses, ${report.checked} validated against the document, ` +
    `${report.unmatched} to undocumented paths; ${reached.length}/${operations.length} operations reached, ` +
    `${report.seen.size} distinct operation/status pairs\n`,
);
if (records.length === 0) {
  process.stderr.write('contract:check: nothing was recorded: is RECORD_RESPONSES reaching the test harness?\n');
  process.exit(1);
}
const unreached = operations.filter((op) => !reached.includes(op));
if (unreached.length > 0 && !partial) {
  report.failures.push(
    ...unreached.map((op) => `${op.method} ${op.path}: documented, but no test received a response from it`),
  );
}
if (report.failures.length > 0) {
  process.stderr.write(`contract:check: ${report.failures.length} response(s) disagree with the OpenAPI document:\n`);
  for (const failure of report.failures.slice(0, 50)) process.stderr.write(`  - ${failure}\n`);
  process.exit(1);
}
