// A server process for tests (spawnServer's `knobs` option): src/main.ts with test knobs
// (kernel/test-knobs.ts), given as JSON in the first argument. Never the production entry.
import type { TestKnobs } from '../kernel/test-knobs.js';
import { runServer } from '../run-server.js';

runServer(JSON.parse(process.argv[2] ?? '{}') as Partial<TestKnobs>);
