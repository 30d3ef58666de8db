import type { VisitEvent } from '../../contract/visit-event.ts'
import type { ValidationIssue } from '../../errors/app-error.ts'

/**
 * Event times (`visit.seen_at`, `emitted_at`) are the versions of the provider's writes (the merge
 * keeps the latest) and are echoed to receivers. A time far in the future (year 9999, a bad clock)
 * would win every later merge and freeze the provider's fields, so a time may be at most
 * MAX_EVENT_TIME_SKEW_MS past our clock: enough for clocks that disagree a little, too little to
 * matter to the merge. docs/management-api.md, "Visit events".
 *
 * - `POST …/visits` (a caller who can be told) refuses a later time: 400 `invalid payload` with an
 *   issue naming the member (futureEventTimeIssues).
 * - A message on the visit-events topic has nobody to answer, and dropping an identified visit over
 *   a clock loses it: the time is replaced by the time the message was published (boundEventTimes).
 */
export const MAX_EVENT_TIME_SKEW_MS = 5 * 60_000

type TimeMember = 'visit.seen_at' | 'emitted_at'

function eventTimes(event: Pick<VisitEvent, 'visit' | 'emitted_at'>): Array<[TimeMember, string]> {
  const out: Array<[TimeMember, string]> = []
  if (typeof event.visit?.seen_at === 'string') out.push(['visit.seen_at', event.visit.seen_at])
  if (typeof event.emitted_at === 'string') out.push(['emitted_at', event.emitted_at])
  return out
}

function isTooLate(value: string, nowMs: number): boolean {
  return Date.parse(value) > nowMs + MAX_EVENT_TIME_SKEW_MS
}

/** One issue per event time later than the clock allows (empty when all are acceptable). */
export function futureEventTimeIssues(event: Pick<VisitEvent, 'visit' | 'emitted_at'>, nowMs: number): ValidationIssue[] {
  const limit = new Date(nowMs + MAX_EVENT_TIME_SKEW_MS).toISOString()
  return eventTimes(event)
    .filter(([, value]) => isTooLate(value, nowMs))
    .map(([member]) => ({
      code: 'maximum',
      message: `must not be later than ${MAX_EVENT_TIME_SKEW_MS / 1000} seconds past the server clock (at most ${limit})`,
      path: `/${member.replace('.', '/')}`,
    }))
}

/**
 * The event with every time later than the clock allows replaced by the publish time (or, should
 * that be as late, the clock): deterministic across redeliveries of one message. `adjusted` names
 * the members replaced, for the log.
 */
export function boundEventTimes(event: VisitEvent, nowMs: number, publishedAt: string): { event: VisitEvent; adjusted: TimeMember[] } {
  const late = eventTimes(event)
    .filter(([, value]) => isTooLate(value, nowMs))
    .map(([member]) => member)
  if (late.length === 0) return { event, adjusted: [] }
  const published = Date.parse(publishedAt)
  const replacement = Number.isNaN(published) || published > nowMs + MAX_EVENT_TIME_SKEW_MS ? new Date(nowMs).toISOString() : new Date(published).toISOString()
  const bounded: VisitEvent = { ...event }
  if (late.includes('visit.seen_at')) bounded.visit = { ...event.visit, seen_at: replacement }
  if (late.includes('emitted_at')) bounded.emitted_at = replacement
  return { event: bounded, adjusted: late }
}
