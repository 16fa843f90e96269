import { tagSnippet } from '../../features/tags/tag-snippet.js';
import { partnerProcedure } from '../procedures.js';
import { tagSnippetMeta, ZTagSnippetRequest, ZTagSnippetResponse } from './snippet.types.js';

export const tagSnippetRoute = partnerProcedure
  .meta(tagSnippetMeta)
  .input(ZTagSnippetRequest)
  .output(ZTagSnippetResponse)
  .query(({ ctx, input }) => tagSnippet(ctx.db, ctx.partner, input));
