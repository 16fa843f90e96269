#!/usr/bin/env node
// The onboarding CLI (`pnpm partner ...` from the repository root): runs the TypeScript source through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
