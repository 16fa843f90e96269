import type { TagSnippetResponse } from '@partner/shared-schemas';
import type { Database } from '../../db/client.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { collectorHostOf, scriptUrlOf } from './collector-host.js';
import { findOwnTag } from './find-own-tag.js';

/** The install snippet: a `ptag` stub that queues calls, then the tag script loaded async. */
function snippetHtml(scriptUrl: string): string {
  return (
    '<script>(function(w,d,u){w.ptag=w.ptag||function(){(w.ptag.q=w.ptag.q||[]).push(arguments)};' +
    "var s=d.createElement('script');s.async=true;s.src=u;(d.head||d.documentElement).appendChild(s)})" +
    `(window,document,${JSON.stringify(scriptUrl).replaceAll('<', '\\u003c')});</script>`
  );
}

/** How a partner installs a tag: its collector host, script URL and HTML snippet. */
export async function tagSnippet(
  db: Database,
  partner: AuthenticatedPartner,
  input: { tagId: string },
): Promise<TagSnippetResponse> {
  const tag = await findOwnTag(db, partner, input.tagId);
  const collectorHost = collectorHostOf(tag, partner);
  const scriptUrl = scriptUrlOf(collectorHost, tag.id);
  return { tagId: tag.id, collectorHost, scriptUrl, html: snippetHtml(scriptUrl) };
}
