import { AppError } from '../../errors/app-error.ts'
import { invalidPayload } from './payload-problem.ts'
import { MAX_CONTACTS_PER_PUSH } from '../../contract/push.ts'
import type { InboundRecord } from './mapping.ts'
import type { BatchShape } from '../../contract/messages.ts'

/**
 * Shape checks of the push bodies (contract 4.3–4.6), done by hand rather than by schema
 * validation: they run on up to 10,000 records per request and must cost next to nothing.
 *
 * - `contacts`: `{contacts: [record, …]}`, 1..10000 objects (more: 413 `too many contacts`).
 * - `events`: the deprecated nested `{events: [{resolution: {…}}, …]}` (origin fallbacks only);
 *   each `resolution` object is one inbound record.
 * - `partnercrm`: one partner CRM contact object.
 *
 * Values nested deeper than MAX_VALUE_DEPTH are refused (400 `invalid payload`): they parse, but
 * storing them as JSON text would overflow the stack later, in the worker.
 */
export type { BatchShape }

/**
 * The records of an accepted push its listeners are told (the first ones): the inbound debugger
 * lists the keys and the push sample counts them in at most this many (domain/activity), so
 * the edge keeps no more of a batch's parsed records once it is checked (accept.ts CheckedPush).
 */
export const LISTENED_RECORDS = 1_000

/** nesting allowed inside one record value (a record's own level not counted) */
export const MAX_VALUE_DEPTH = 32

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** True when no value of the record nests deeper than MAX_VALUE_DEPTH (iterative: hostile depth cannot overflow). */
export function withinDepth(record: Record<string, unknown>): boolean {
  let stack: Array<{ v: unknown; d: number }> | null = null
  for (const key in record) {
    const v = record[key]
    if (typeof v !== 'object' || v === null) continue
    stack ??= []
    stack.push({ v, d: 1 })
  }
  if (!stack) return true
  while (stack.length > 0) {
    const { v, d } = stack.pop()!
    if (d > MAX_VALUE_DEPTH) return false
    const children = Array.isArray(v) ? v : Object.values(v as object)
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push({ v: c, d: d + 1 })
  }
  return true
}

/** where record i of a refused body is (built only for the refusal: the loop runs up to 10,000 times) */
const recordPath = (shape: BatchShape, i: number) => (shape === 'contacts' ? `/contacts/${i}` : `/events/${i}/resolution`)

/** The records of a push body of the given shape, or AppError 400 / 413. */
export function recordsOf(body: unknown, shape: BatchShape, maxRecords = MAX_CONTACTS_PER_PUSH): InboundRecord[] {
  // each refusal names its field (payload-problem.ts): the answer does not, the debugger and the log do
  if (!isObject(body)) throw invalidPayload('', 'the body is not a JSON object')
  if (shape === 'partnercrm') {
    if (!withinDepth(body)) throw invalidPayload('', `nests deeper than ${MAX_VALUE_DEPTH} levels`)
    return [body]
  }
  const list = shape === 'contacts' ? body.contacts : body.events
  if (!Array.isArray(list)) throw invalidPayload(`/${shape}`, list === undefined ? 'missing' : 'not a list')
  if (list.length === 0) throw invalidPayload(`/${shape}`, 'empty')
  if (list.length > maxRecords) throw new AppError('too_many_contacts')
  const records: InboundRecord[] = new Array(list.length)
  for (let i = 0; i < list.length; i++) {
    const item = list[i]
    const record = shape === 'contacts' ? item : isObject(item) ? item.resolution : undefined
    if (!isObject(record)) throw invalidPayload(recordPath(shape, i), 'not a JSON object (one record)')
    if (!withinDepth(record)) throw invalidPayload(recordPath(shape, i), `nests deeper than ${MAX_VALUE_DEPTH} levels`)
    records[i] = record
  }
  return records
}

/**
 * Which shape an origin-fallback body has: `contacts` when it has a `contacts` member, `events`
 * when it has only `events`; anything else is checked as `contacts` (and fails as such).
 */
export function fallbackShapeOf(body: unknown): BatchShape {
  if (isObject(body) && !('contacts' in body) && 'events' in body) return 'events'
  return 'contacts'
}
