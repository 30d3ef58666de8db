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
export const TimeInput = Type.String({ maxLength: 30, pattern: '^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?Z?)?$' })

/** The status-code filter: a class (4xx), one code (404), `none` (no answer), or '' (any). */
export const CodeInput = Type.String({ maxLength: 4, pattern: '^([1-5]xx|[1-5]\\d\\d|none)?$' })

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
