import { Type } from 'typebox'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import type { StatusCodeFilter } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import type { SafeHtml } from '../kit/page.ts'
import { when } from '../kit/time.ts'

/**
 * A time as the filter and recover forms send it: `<input type="datetime-local">` (minutes or
 * seconds, no zone: read as UTC, as the labels say) or an ISO 8601 instant in UTC ('Z'). '' is
 * "no bound".
 */
const TIME_PATTERN = '^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?Z?)?$'
export const TimeInput = Type.String({ maxLength: 30, pattern: TIME_PATTERN })

/** The status-code filter: a class (4xx), one code (404), `none` (no answer), or '' (any). */
const CODE_PATTERN = /^([1-5]xx|[1-5]\d\d|none)?$/

/**
 * A log filter's value as the address carries it: bounded in length only, so a value that was
 * edited (`code=999`, `from=yesterday`) reaches the screen, which names it in words and shows the
 * log without it (endpoint-page.ts), rather than the portal's "address not understood" page.
 */
export const FilterText = Type.String({ maxLength: 64 })

/** The code filter's value ('' and absent: undefined), or null when it is not one (CODE_PATTERN). */
export function codeFilterValueOf(value: string | undefined): string | undefined | null {
  if (!value) return undefined
  return CODE_PATTERN.test(value) ? value : null
}

/** A time filter's instant (as instantOf), or null when it is not a real date and time TimeInput admits. */
export function filterInstantOf(value: string | undefined): string | undefined | null {
  if (!value) return undefined
  if (value.length > 30 || !new RegExp(TIME_PATTERN).test(value)) return null
  const ms = Date.parse(value.endsWith('Z') ? value : `${value}Z`)
  return Number.isNaN(ms) ? null : new Date(ms).toISOString()
}

/** The instant of a time input as created_at is written (ISO 8601, ms, Z); undefined for ''. */
export function instantOf(value: string | undefined): string | undefined {
  if (!value) return undefined
  const ms = Date.parse(value.endsWith('Z') ? value : `${value}Z`)
  // the pattern admits 2026-13-45T99:99: a refusal, not a silent "no bound"
  if (Number.isNaN(ms)) throw new AppError('invalid_payload', { issues: [{ path: '/time', code: 'format', message: 'give a real date and time' }] })
  return new Date(ms).toISOString()
}

/** An instant as a datetime-local input's value (UTC, to the second). */
export const inputValueOf = (iso: string | undefined): string => (iso ? iso.slice(0, 19) : '')

export function codeFilterOf(value: string | undefined): StatusCodeFilter | undefined {
  if (!value) return undefined
  if (/^\d{3}$/.test(value)) return Number(value)
  return value as StatusCodeFilter
}

/** A time the viewer reads: the portal's one time format (kit/time.ts). */
export function timeOf(iso: string): SafeHtml | '—' {
  return when(iso)
}
