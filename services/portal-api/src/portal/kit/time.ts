import { html, type SafeHtml } from './html.ts'

/**
 * The portal's one way to show an instant (docs/portal.md, "Times"): relative words ("3 min ago",
 * "in 2 h") computed on the server from the request's clock, the instant itself in `datetime`,
 * and the exact UTC text both as the title (a pointer's tooltip) and as visually hidden text (a
 * screen reader reads it; select-and-copy gets it). No script changes it.
 *
 * A view does not know the request's clock, so `when` writes the exact text as a placeholder and
 * `sendPage` (page.ts) turns every such placeholder into the relative words with `relativeTimes`.
 */

/** "2026-11-28 16:10:34 UTC" */
export function exactUtc(iso: string): string {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return iso
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** An instant (ISO 8601) as the portal shows it; '—' for none. */
export function when(iso: string | null | undefined): SafeHtml | '—' {
  if (!iso) return '—'
  const exact = exactUtc(iso)
  return html`<time class="ago" datetime="${iso}" title="${exact}">${exact}</time>`
}

/** "just now", "in 30 s", "3 min ago", "in 2 h", "5 days ago" (a time soon to come in seconds: a 60 s window's reset) */
function relativeWords(ms: number, nowMs: number): string {
  const delta = ms - nowMs
  const abs = Math.abs(delta)
  const s = Math.round(abs / 1000)
  if (s < 45) return delta > 0 && s > 0 ? `in ${s} s` : 'just now'
  const amount = s < 3_600 ? `${Math.max(1, Math.round(s / 60))} min` : s < 86_400 ? `${Math.round(s / 3_600)} h` : `${Math.round(s / 86_400)} days`
  const fixed = amount === '1 days' ? '1 day' : amount
  return delta < 0 ? `${fixed} ago` : `in ${fixed}`
}

const PLACEHOLDER = /<time class="ago" datetime="([^"]*)" title="([^"]*)">[^<]*<\/time>/g

/** The page's placeholders from `when`, with the relative words as of `nowMs` (and the exact text kept for a screen reader). */
export function relativeTimes(page: string, nowMs: number): string {
  return page.replace(PLACEHOLDER, (whole, iso: string, exact: string) => {
    const ms = Date.parse(iso.replaceAll('&#39;', "'"))
    if (Number.isNaN(ms)) return whole
    return `<time class="ago" datetime="${iso}" title="${exact}">${relativeWords(ms, nowMs)}<span class="visually-hidden"> (${exact})</span></time>`
  })
}
