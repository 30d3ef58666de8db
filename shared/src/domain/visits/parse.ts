import { createAjv } from '../../contract/ajv.ts'
import { VISIT_EVENT_VERSION, VisitEvent } from '../../contract/visit-event.ts'
import { canonicalUuid } from '../../lib/uuid.ts'

// every problem is reported (the management API answers them as issues, the consumer logs them);
// no coercion, no defaults: an event is checked as it came
const validate = createAjv({ allErrors: true }).compile<VisitEvent>(VisitEvent)

export class InvalidVisitEvent extends Error {
  readonly issues: string[]
  constructor(issues: string[]) {
    super(`invalid visit event: ${issues.join('; ')}`)
    this.name = 'InvalidVisitEvent'
    this.issues = issues
  }
}

/** Validates an already-parsed event (schema, then: exactly one of contact_id, lsv, resolution). */
export function validateVisitEvent(value: unknown): VisitEvent {
  if (!validate(value)) {
    throw new InvalidVisitEvent((validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`))
  }
  const ways = [value.contact_id, value.lsv, value.resolution].filter((x) => x !== undefined).length
  if (ways !== 1) throw new InvalidVisitEvent(['exactly one of contact_id, lsv, resolution is required'])
  // every visit crosses this, from Pub/Sub and from the management API: a contact id in upper
  // case or URN form names the contact it names in lower case (lib/uuid.ts)
  if (value.contact_id !== undefined) value.contact_id = canonicalUuid(value.contact_id)
  return value
}

/** A queue message -> a valid event; unknown versions and bad bodies throw InvalidVisitEvent. */
export function parseVisitMessage(data: Buffer, attributes: Record<string, string>): VisitEvent {
  const v = attributes.v ?? VISIT_EVENT_VERSION
  if (v !== VISIT_EVENT_VERSION) throw new InvalidVisitEvent([`unsupported version ${v}`])
  let parsed: unknown
  try {
    parsed = JSON.parse(data.toString('utf8'))
  } catch {
    throw new InvalidVisitEvent(['body is not JSON'])
  }
  return validateVisitEvent(parsed)
}
