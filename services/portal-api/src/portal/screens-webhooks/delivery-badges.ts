import type { DeliveryAttempt } from '@lsv/shared/model/records.ts'
import type { DeliveryStatus } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { TEST_EVENT_ID_PREFIX } from '@lsv/shared/domain/webhooks/test-event.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { badge, type BadgeTone } from '../kit/badge.ts'

/*
 * A delivery's state as badges (kit/badge.ts), the same in the log and the delivery debugger, and
 * the way the inbound debugger shows an answer: the word or the code says it, the colour repeats it.
 */

const STATUS_TONE: Record<DeliveryStatus, BadgeTone> = { pending: 'neutral', retrying: 'warn', succeeded: 'ok', failed: 'bad' }

export const statusBadge = (status: DeliveryStatus): SafeHtml => badge(status, STATUS_TONE[status])

/** The HTTP status an attempt got: only 200 acknowledges (docs/webhooks.md, "Answer"), so any other code reads as bad. */
const codeBadge = (code: number): SafeHtml => badge(code, code === 200 ? 'ok' : 'bad')

/** The answer of an attempt in a table cell: its status code, or the transport error (whole in the title). */
export function answerCell(last: DeliveryAttempt | undefined): SafeHtml | string {
  if (!last) return '—'
  if (last.status_code !== null) return codeBadge(last.status_code)
  return html`<span title="${last.error ?? ''}">${last.error ?? '—'}</span>`
}

/** " test" after the event id of a test event (`sendTestEvent`), nothing after a real one. */
export const testBadge = (eventId: string): SafeHtml | '' => (eventId.startsWith(TEST_EVENT_ID_PREFIX) ? html` ${badge('test')}` : '')
