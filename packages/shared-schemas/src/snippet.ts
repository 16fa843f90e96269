import { z } from 'zod';
import { Uuid } from './common.js';

export const TagSnippetInput = z.object({ tagId: Uuid }).meta({ id: 'TagSnippetInput' });
export type TagSnippetInput = z.input<typeof TagSnippetInput>;

/** How to install a tag: the HTML a merchant pastes into every page (an additive endpoint, decisions.md). */
export const TagSnippetResponse = z
  .object({
    tagId: Uuid,
    collectorHost: z.string().meta({
      description: "The tag's collector host (its CNAME): the script and its events are served from it first-party.",
      example: 'edge-k3j9x2.shop-example.com',
    }),
    scriptUrl: z.string().meta({ example: 'https://edge-k3j9x2.shop-example.com/t/0b9e….js' }),
    html: z.string().meta({
      description:
        'A `<script>` element for the `<head>` of every page: defines `ptag` (calls are queued until the script loads) and loads the script asynchronously.',
    }),
  })
  .meta({ id: 'TagSnippetResponse' });
export type TagSnippetResponse = z.infer<typeof TagSnippetResponse>;
