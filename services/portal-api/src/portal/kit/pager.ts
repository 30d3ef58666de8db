import { Type } from 'typebox'
import { html, type SafeHtml } from './html.ts'

/**
 * The pager of a table that can grow (issue 22: "tables readable with 10,000 rows"). Pages are
 * keyset pages (cursors), never offsets, and nothing is counted: where the tenant is comes from
 * a page number the links carry (`page`, display only, so a hand-edited one misleads nobody but
 * its editor) and the rows it shows.
 */

/**
 * A page link's values (`page`, a cursor) in the query schema: bounded in length only, so a link
 * that was edited or cut short is answered by the screen in words (BAD_PAGE_LINK), not with the
 * schema's text.
 */
export const PageLinkValue = Type.Optional(Type.String({ maxLength: 200 }))

/** What a screen says, with status 400, for a page link it did not make. */
export const BAD_PAGE_LINK = 'That page link is not one the portal made (it may have been edited or cut short). Start again from the first page.'

/** The page number a link carries (1 when none), or null when it is not one (1 to 999,999). */
export const pageNumberOf = (page: string | undefined): number | null => (page === undefined ? 1 : /^[1-9][0-9]{0,5}$/.test(page) ? Number(page) : null)

const grouped = (n: number) => n.toLocaleString('en-US')

export interface PagerLinks {
  /** the aria-label of the navigation, e.g. "Contact pages" */
  label: string
  /** the table's path; the links add their query to it */
  path: string
  /** this page's number (1 for the first) */
  page: number
  /** rows on this page, and the most a page holds */
  rows: number
  size: number
  /** e.g. "contacts", "entries" */
  noun: string
  /** the query of the previous / next page (without `page`), or null when there is none */
  prev: string | null
  next: string | null
  /** the text of the link back to page 1 ("First page", "Newest") */
  firstText: string
  /** the words of the previous / next links when not "Previous page" / "Next page" (a log: "Newer" / "Older") */
  prevText?: string
  nextText?: string
  /** whether this is not the table's start (reached through a link): the link back is shown */
  away: boolean
  /** the query the first-page link keeps (a log's filters), and a fragment every link ends with */
  firstQuery?: string
  fragment?: string
}

/** "Page 3 · contacts 51–75 · 25 per page", then First / Previous / Next links (rel prev/next). */
export function pager(p: PagerLinks): SafeHtml {
  const from = (p.page - 1) * p.size + 1
  const where =
    p.rows === 0
      ? html`Page ${grouped(p.page)} · no ${p.noun} here · ${p.size} per page`
      : html`Page ${grouped(p.page)} · ${p.noun} ${grouped(from)}–${grouped(from + p.rows - 1)} · ${p.size} per page`
  const hash = p.fragment ? `#${p.fragment}` : ''
  const link = (query: string, page: number) => `${p.path}?${query}${page > 1 ? `&page=${page}` : ''}${hash}`
  const first = `${p.path}${p.firstQuery ? `?${p.firstQuery}` : ''}${hash}`
  return html`<nav class="pager" aria-label="${p.label}">
<p class="hint">${where}</p>
${p.away ? html`<a href="${first}">${p.firstText}</a>` : ''}
${p.prev !== null ? html`<a href="${link(p.prev, Math.max(1, p.page - 1))}" rel="prev">${p.prevText ?? 'Previous page'}</a>` : ''}
${p.next !== null ? html`<a href="${link(p.next, p.page + 1)}" rel="next">${p.nextText ?? 'Next page'}</a>` : ''}
</nav>`
}
