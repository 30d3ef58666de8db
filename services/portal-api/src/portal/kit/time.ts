import { html, type SafeHtml } from './html.ts'

/**
 * The portal's one time format: relative ("3 min ago", "in 2 h") in the text, the exact UTC time
 * in `datetime`, in `title` (hover) and, for screen readers, in visually hidden words after it.
 * Relative to the moment the page is drawn (pages are never cached).
 */
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** "2026-09-04 12:03:09 UTC" */
export function exactUtc(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`
}

/** "just now", "3 min ago", "5 h ago", "2 days ago", "in 4 min"; past 30 days, the date */
export function relativeTo(iso: string, nowMs: number): string {
  const diff = nowMs - Date.parse(iso)
  const span = Math.abs(diff)
  if (span >= 30 * DAY) return iso.slice(0, 10)
  if (span < MINUTE) return diff >= 0 ? 'just now' : 'in under a minute'
  const amount =
    span < HOUR
      ? `${Math.floor(span / MINUTE)} min`
      : span < DAY
        ? `${Math.floor(span / HOUR)} h`
        : `${Math.floor(span / DAY)} ${span < 2 * DAY ? 'day' : 'days'}`
  return diff >= 0 ? `${amount} ago` : `in ${amount}`
}

/** A time on a page; '—' for none. */
export function timeAgo(iso: string | null | undefined, nowMs: number = Date.now()): SafeHtml | string {
  if (!iso) return '—'
  const exact = exactUtc(iso)
  return html`<time datetime="${iso}" title="${exact}">${relativeTo(iso, nowMs)}<span class="visually-hidden"> (${exact})</span></time>`
}
