import { router } from '../procedures.js';
import { deleteTagRoute } from './delete.js';
import { generateTagRoute } from './generate.js';
import { getTagRoute } from './get.js';
import { tagSnippetRoute } from './snippet.js';
import { updateTagRoute } from './update.js';
import { verifyTagRoute } from './verify.js';

export const tagRouter = router({
  generate: generateTagRoute,
  verify: verifyTagRoute,
  snippet: tagSnippetRoute,
  get: getTagRoute,
  update: updateTagRoute,
  delete: deleteTagRoute,
});
