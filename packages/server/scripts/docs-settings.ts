// Writes docs/settings.md from the settings' schema (src/kernel/settings.ts): `pnpm docs:settings`.
// test/unit/settings-doc.test.ts fails while the committed page differs from what this writes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSettingsDoc, SETTINGS_DOC_PATH } from '../src/kernel/settings-doc.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
writeFileSync(path.join(root, SETTINGS_DOC_PATH), renderSettingsDoc());
process.stderr.write(`docs:settings: wrote ${SETTINGS_DOC_PATH}\n`);
