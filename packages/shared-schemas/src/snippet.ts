import { z } from 'zod';
import { Uuid } from './common.js';

export const TagSnippetInput = z
  .object({
    tagId: Uuid.meta({
      description: 'The tag (UUID) whose snippet to return.',
      example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
    }),
  })
  .meta({ id: 'TagSnippetInput' });
export type TagSnippetInput = z.input<typeof TagSnippetInput>;

/** How to install a tag: the HTML a merchant pastes into every page (an additive endpoint, docs/decisions/tags-and-domains.md). */
export const TagSnippetResponse = z
  .object({
    tagId: Uuid.meta({ example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f' }),
    collectorHost: z.string().meta({
      description: "The tag's collector host (its CNAME): the script and its events are served from it first-party.",
      example: 'edge-k3j9x2.acme-store.com',
    }),
    scriptUrl: z.string().meta({
      description: 'The tag script, served by the collector host.',
      example: 'https://edge-k3j9x2.acme-store.com/t/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f.js',
    }),
    html: z.string().meta({
      description:
        'A script element for the `<head>` of every page: defines `ptag` (calls are queued until the script loads) and loads the script asynchronously.',
      example:
        '<script>(function(w,d,u){w.ptag=w.ptag||function(){(w.ptag.q=w.ptag.q||[]).push(arguments)};var s=d.createElement(\'script\');s.async=true;s.src=u;(d.head||d.documentElement).appendChild(s)})(window,document,"https://edge-k3j9x2.acme-store.com/t/9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f.js");</script>',
    }),
  })
  .meta({ id: 'TagSnippetResponse' });
export type TagSnippetResponse = z.infer<typeof TagSnippetResponse>;
