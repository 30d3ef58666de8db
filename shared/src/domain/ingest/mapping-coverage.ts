import type { ConnectionType, CustomFieldDefinition, FieldMapping } from '../../model/records.ts'
import { CORE_TARGETS, FALLBACK_MAPPINGS, normalizeKey, partnerCrmMappings } from './mapping.ts'

/** The keys of a partner CRM body its aliases read (mapping.ts PARTNER_ALIASES) or that route it. */
const PARTNER_READ = new Set([
  'contactId',
  'contact_id',
  'id',
  'email',
  'firstName',
  'first_name',
  'lastName',
  'last_name',
  'company',
  'companyName',
  'title',
  'locationId',
  'location_id',
])
const CORE_KEYS: ReadonlySet<string> = new Set(CORE_TARGETS.map(normalizeKey))

/**
 * Whether a top-level key of an inbound record is read by the connection's mappings, the way the
 * worker's mapper reads it (mapping.ts createRecordMapper): its normalized form is the `from` of a
 * mapping to one of the six fields or to a defined custom field, or it is the anchor key
 * `external_id` when no mapping names the anchor; no mappings at all is the six-field fallback.
 * A partner CRM body's aliases (and its location key) are always read; its other keys only by a
 * custom field mapping. The connection page counts the keys recent pushes carried that this
 * answers false for: values that are dropped without a word (contract 2.5).
 */
export function keyReader(
  shape: ConnectionType,
  connectionMappings: readonly FieldMapping[],
  definitions: readonly CustomFieldDefinition[],
): (key: string) => boolean {
  const own = shape === 'partnercrm' ? partnerCrmMappings(connectionMappings).slice(FALLBACK_MAPPINGS.length) : connectionMappings
  const effective = shape === 'partnercrm' || own.length > 0 ? own : FALLBACK_MAPPINGS
  const defined = new Set(definitions.map((d) => `custom_fields.${d.key}`))
  const read = new Set<string>()
  let anchorNamed = false
  for (const m of effective) {
    if (!(CORE_TARGETS as readonly string[]).includes(m.to) && !defined.has(m.to)) continue
    if (m.to === 'external_id') anchorNamed = true
    read.add(normalizeKey(m.from))
  }
  read.delete('')
  if (shape === 'partnercrm') return (key) => PARTNER_READ.has(key) || (!CORE_KEYS.has(normalizeKey(key)) && read.has(normalizeKey(key)))
  if (!anchorNamed) read.add('externalid')
  return (key) => read.has(normalizeKey(key))
}

/** The counted keys no mapping reads, most frequent first. */
export function droppedKeys(counts: Record<string, number>, reads: (key: string) => boolean): Array<{ key: string; records: number }> {
  return Object.entries(counts)
    .filter(([k]) => !reads(k))
    .map(([key, records]) => ({ key, records }))
    .sort((a, b) => b.records - a.records || (a.key < b.key ? -1 : 1))
}
