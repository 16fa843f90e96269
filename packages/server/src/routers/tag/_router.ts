import { router } from '../procedures.js';
import { generateTagRoute } from './generate.js';
import { getTagRoute } from './get.js';
import { tagSnippetRoute } from './snippet.js';
import { verifyTagRoute } from './verify.js';

export const tagRouter = router({
  generate: generateTagRoute,
  verify: verifyTagRoute,
  snippet: tagSnippetRoute,
  get: getTagRoute,
});
