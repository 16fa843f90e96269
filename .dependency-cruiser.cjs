// The import rules of docs/ARCHITECTURE.md, checked by `pnpm check:deps` (CI) and by
// packages/server/test/unit/import-rules.test.ts. Paths are relative to the repository root.
//
// Cycles count type-only imports too: they never run, but a type cycle still ties two modules
// together (neither can be read, moved or split alone) and one edit turns `import type` into a
// value import; a shared type is cheap to move into a leaf file.
const path = require('node:path');

const SRC = '^packages/server/src/';
const layer = (name) => `${SRC}${name}`;
const APP_ROOT = `${SRC}app\\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports (type-only imports included).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves: a rule cannot hold on an import it cannot see.',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'kernel-imports-nothing-of-the-app',
      comment: 'kernel/ sees node builtins, npm packages and @partner/shared-schemas only.',
      severity: 'error',
      from: { path: layer('kernel/') },
      to: { path: '^packages/', pathNot: [layer('kernel/'), '^packages/shared-schemas/src/'] },
    },
    {
      name: 'db-imports-only-kernel',
      comment: 'db/ imports kernel/ and itself of the app.',
      severity: 'error',
      from: { path: layer('db/') },
      to: { path: SRC, pathNot: [layer('db/'), layer('kernel/')] },
    },
    {
      name: 'features-import-kernel-db-features-runtime',
      comment: 'features/ never see transport/, routes/, jobs/, openapi/, app.ts or context.ts.',
      severity: 'error',
      from: { path: layer('features/') },
      to: { path: SRC, pathNot: [layer('kernel/'), layer('db/'), layer('features/'), layer('runtime/')] },
    },
    {
      name: 'features-import-only-types-of-runtime',
      comment: 'features/ take runtime parts as arguments: they import their types, never the parts.',
      severity: 'error',
      from: { path: layer('features/') },
      to: { path: layer('runtime/'), dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'clickhouse-only-through-stats',
      comment:
        "The statistics own ClickHouse: db/clickhouse/ is reached from features/stats/ only (and bench.ts, the bench's handle on it).",
      severity: 'error',
      from: { path: SRC, pathNot: [layer('features/stats/'), layer('db/clickhouse/'), `${SRC}bench\\.ts$`] },
      to: { path: layer('db/clickhouse/') },
    },
    {
      name: 'stats-only-through-its-port',
      comment:
        'Ingestion, erasure, retention, the purge and the jobs call StatsStore (store.ts); procedures call its read use cases; the bench seeds channels as ingestion names them.',
      severity: 'error',
      from: { path: SRC, pathNot: [layer('features/stats/')] },
      to: {
        path: layer('features/stats/'),
        pathNot: [
          layer(
            'features/stats/(store|summary|timeseries|breakdown|realtime|funnel|attribution|visitors-by-hour|channel)\\.ts$',
          ),
        ],
      },
    },
    {
      name: 'features-never-import-trpc',
      comment: 'Use cases know nothing of tRPC (the error table maps to it in routes/procedures.ts).',
      severity: 'error',
      from: { path: layer('features/') },
      to: { path: '(^|/)node_modules/@trpc/' },
    },
    {
      name: 'runtime-never-imports-features',
      comment:
        'runtime/ sits below features/, not even a type: use cases are bound into the parts in compose.ts, shared types live in runtime/ or below.',
      severity: 'error',
      from: { path: layer('runtime/') },
      to: { path: layer('features/') },
    },
    {
      name: 'runtime-never-imports-transport-routes-jobs-app',
      severity: 'error',
      from: { path: layer('runtime/') },
      to: { path: [layer('transport/'), layer('routes/'), layer('jobs/'), APP_ROOT] },
    },
    {
      name: 'routes-never-reach-transport',
      comment:
        'Not even through another file: a procedure or route declaration that reaches transport/ breaks the layering.',
      severity: 'error',
      from: { path: layer('routes/') },
      to: { path: layer('transport/'), reachable: true },
    },
    {
      name: 'routes-never-import-node-http',
      severity: 'error',
      from: { path: layer('routes/') },
      to: { dependencyTypes: ['core'], path: '^(node:)?http$' },
    },
    {
      name: 'openapi-never-reaches-transport',
      comment: 'The document is built from the procedures and the route table (routes/), never from a handler.',
      severity: 'error',
      from: { path: layer('openapi/') },
      to: { path: layer('transport/'), reachable: true },
    },
    {
      name: 'jobs-never-import-transport-or-routes',
      severity: 'error',
      from: { path: layer('jobs/') },
      to: { path: [layer('transport/'), layer('routes/')] },
    },
    {
      name: 'transport-never-imports-drizzle-or-schema',
      comment: 'Transports call use cases; tables are read and written in features/ and db/.',
      severity: 'error',
      from: { path: layer('transport/') },
      to: { path: ['(^|/)node_modules/drizzle-orm/', layer('db/schema/')] },
    },
    {
      name: 'shared-schemas-import-only-zod',
      severity: 'error',
      from: { path: '^packages/shared-schemas/src/' },
      to: { pathNot: ['^packages/shared-schemas/src/', '(^|/)node_modules/zod/'] },
    },
    {
      // The element runs in merchants' browsers: the SDK's session client and the chart, nothing else.
      name: 'elements-import-only-the-sdk-and-uplot',
      severity: 'error',
      from: { path: '^packages/elements/src/' },
      to: { pathNot: ['^packages/elements/src/', '^packages/sdk/', '(^|/)node_modules/uplot/'] },
    },
    {
      name: 'sdk-never-imports-the-server',
      severity: 'error',
      from: { path: '^packages/sdk/' },
      to: { path: '^packages/server/' },
    },
  ],
  options: {
    // Type-only imports are seen (the cycle rule counts them; runtime types are allowed to features/).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: path.join(__dirname, '.dependency-cruiser.tsconfig.json') },
    doNotFollow: { path: 'node_modules' },
    // The hand-written declarations beside testing/*.mjs describe those files; they import nothing.
    exclude: { path: '\\.d\\.mts$' },
    // Workspace packages export TypeScript through their exports maps ("types"/"default").
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};
