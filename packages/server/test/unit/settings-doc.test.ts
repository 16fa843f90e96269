// docs/settings.md is generated from the settings' schema (src/kernel/settings.ts): a setting
// added, renamed or given another default or reason fails here until the page is regenerated.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvSchema } from '../../src/kernel/env.js';
import { renderSettingsDoc, SETTINGS_DOC_PATH } from '../../src/kernel/settings-doc.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('docs/settings.md', () => {
  const committed = readFileSync(path.join(ROOT, SETTINGS_DOC_PATH), 'utf8');

  it('is what the schema generates', () => {
    expect(
      committed === renderSettingsDoc(),
      `${SETTINGS_DOC_PATH} differs from the settings' schema (src/kernel/settings.ts): run \`pnpm docs:settings\` and commit it`,
    ).toBe(true);
  });

  it('has one row per setting the server parses', () => {
    const rows = [...committed.matchAll(/^\| `([A-Z0-9_]+)` +\|/gm)].map((match) => match[1]);
    expect(rows.sort()).toEqual(Object.keys(EnvSchema.shape).sort());
  });
});
