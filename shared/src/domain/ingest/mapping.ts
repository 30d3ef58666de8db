import { LRUCache } from 'lru-cache'
import type { ConnectionType, ContactPatch, CustomFieldDefinition, CustomFieldType, FieldMapping, StoredCustomField } from '../../model/records.ts'
import { atMostCodePoints } from '../../lib/code-points.ts'

/**
 * Field mapping of one inbound contact record (contract 2.5; docs/ingestion.md).
 *
 * - Keys are matched case-insensitively after normalization: lower-case, every character that is
 *   not a letter or a digit removed (`First Name`, `first_name`, `FIRSTNAME` are all `firstname`).
 * - A connection's `field_mappings` name the keys that land on `email`, `first_name`, `last_name`,
 *   `company`, `title`, `external_id` or `custom_fields.<key>`. Every other key is dropped.
 * - A connection without mappings uses the fallback extraction of exactly six fields.
 * - null values are ignored; a nested array or object is stored as its JSON text (on the five
 *   contact fields and on scalar-typed custom fields).
 * - The anchor (`external_id`) comes from a mapping to `external_id` when the connection has one,
 *   otherwise from the record's own `external_id` key: without it a record has no idempotency
 *   anchor and is not accepted (it is counted out of `accepted` and never stored).
 */

export const CORE_TARGETS = ['email', 'first_name', 'last_name', 'company', 'title', 'external_id'] as const

/** the fallback extraction: exactly the six fields, each from its own key */
export const FALLBACK_MAPPINGS: readonly FieldMapping[] = CORE_TARGETS.map((t) => ({ from: t, to: t }))

/**
 * An external id longer than this could never be named by link minting (contract 4.2): no anchor.
 * Characters are code points, as minting's schema counts them, so the two agree on every id.
 */
const MAX_EXTERNAL_ID_LENGTH = 256

/** Custom field types whose value is stored as JSON; the other nine are stored as text (contract 2.1). */
const JSON_STORAGE_TYPES: ReadonlySet<CustomFieldType> = new Set(['file', 'multi_select', 'signature', 'textbox_list'])
/** JSON types that hold a list: a scalar value becomes a one-element list. */
const LIST_TYPES: ReadonlySet<CustomFieldType> = new Set(['multi_select', 'textbox_list'])

const NON_ALNUM = /[^\p{L}\p{N}]+/gu

/**
 * Records of one batch repeat the same few keys thousands of times: normalized forms are
 * remembered (bounded), which makes counting `accepted` on 10,000 records a matter of map lookups.
 */
const normalized = new LRUCache<string, string>({ max: 10_000 })

export function normalizeKey(key: string): string {
  let n = normalized.get(key)
  if (n === undefined) {
    n = key.toLowerCase().replace(NON_ALNUM, '')
    if (key.length <= 256) normalized.set(key, n)
  }
  return n
}

export type InboundRecord = Record<string, unknown>

interface MappedRecord {
  /** the anchor, or null: the record cannot be stored idempotently and is dropped */
  externalId: string | null
  patch: ContactPatch
  /** rough size of the stored values in bytes (strings counted in UTF-16 units) */
  approxBytes: number
  /** mapped values not stored, with why (the worker reports them: docs/ingestion.md, "Refusals") */
  refused: RefusedValue[]
}

/** A mapped value that is not stored: its target, the value as sent (shortened), and why. */
interface RefusedValue {
  field: string
  value: string
  reason: string
}

/** how much of a refused value is kept to show the tenant */
const REFUSED_VALUE_CHARS = 120

interface Target {
  kind: 'core' | 'custom'
  name: string
  definition?: CustomFieldDefinition
}

export interface RecordMapper {
  /** the anchor of a record, exactly as `map` finds it (the edge counts `accepted` with it) */
  anchorOf(record: InboundRecord): string | null
  map(record: InboundRecord): MappedRecord
}

/** First non-null value per normalized key, in the record's key order. */
function indexRecord(record: InboundRecord, wanted: ReadonlySet<string>): Map<string, unknown> {
  const index = new Map<string, unknown>()
  for (const key of Object.keys(record)) {
    const value = record[key]
    if (value === null || value === undefined) continue
    const norm = normalizeKey(key)
    if (!wanted.has(norm) || index.has(norm)) continue
    index.set(norm, value)
  }
  return index
}

/** Text of a value for a text column: strings trimmed, numbers and booleans as text, arrays and objects as JSON. */
function textOf(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') {
    const t = value.trim()
    return t === '' ? null : t
  }
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return JSON.stringify(value)
}

/** The anchor value: a non-blank string of at most 256 characters (code points), or a finite number. */
function anchorValue(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null
  if (typeof value !== 'string') return null
  const t = value.trim()
  return t.length > 0 && atMostCodePoints(t, MAX_EXTERNAL_ID_LENGTH) ? t : null
}

/** Loose but safe: one @, no whitespace, a dot in the domain. Anything else is not a business email. */
const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/

/** Firestore stores no array directly inside an array. */
function hasNestedArray(value: unknown): boolean {
  const stack: Array<{ v: unknown; inArray: boolean }> = [{ v: value, inArray: false }]
  while (stack.length > 0) {
    const { v, inArray } = stack.pop()!
    if (Array.isArray(v)) {
      if (inArray) return true
      for (const x of v) stack.push({ v: x, inArray: true })
    } else if (v !== null && typeof v === 'object') {
      for (const x of Object.values(v)) stack.push({ v: x, inArray: false })
    }
  }
  return false
}

/**
 * A custom field value typed per the definition: the four JSON storage types keep the JSON value
 * (a scalar becomes a one-element list for the list types; a value Firestore cannot hold, an
 * array inside an array, is kept as its JSON text); the nine scalar types are stored as text.
 */
export function customFieldValue(type: CustomFieldType, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (JSON_STORAGE_TYPES.has(type)) {
    let v = value
    if (LIST_TYPES.has(type) && (typeof v !== 'object' || v === null)) v = [v]
    return hasNestedArray(v) ? JSON.stringify(v) : v
  }
  return textOf(value)
}

function approxSize(value: unknown): number {
  if (typeof value === 'string') return value.length
  if (value === null || typeof value !== 'object') return 8
  return JSON.stringify(value).length
}

/**
 * Compiles a connection's mappings (and the account's custom field definitions) once per batch.
 * A mapping to `custom_fields.<key>` without a definition of that key is ignored (unmapped).
 */
export function createRecordMapper(fieldMappings: readonly FieldMapping[], definitions: readonly CustomFieldDefinition[] = []): RecordMapper {
  const mappings = fieldMappings.length > 0 ? fieldMappings : FALLBACK_MAPPINGS
  const defs = new Map(definitions.map((d) => [d.key, d]))
  // per normalized source key, its targets in mapping order
  const targets = new Map<string, Target[]>()
  const anchorKeys: string[] = []
  for (const m of mappings) {
    if (typeof m?.from !== 'string' || typeof m?.to !== 'string') continue
    const from = normalizeKey(m.from)
    if (from === '') continue
    let target: Target | null = null
    if ((CORE_TARGETS as readonly string[]).includes(m.to)) target = { kind: 'core', name: m.to }
    else if (m.to.startsWith('custom_fields.')) {
      const key = m.to.slice('custom_fields.'.length)
      const definition = defs.get(key)
      if (definition && key !== '__proto__') target = { kind: 'custom', name: key, definition }
    }
    if (!target) continue
    if (target.kind === 'core' && target.name === 'external_id') anchorKeys.push(from)
    const list = targets.get(from) ?? []
    list.push(target)
    targets.set(from, list)
  }
  // no mapping names the anchor: the record's own `external_id` key is the anchor
  if (anchorKeys.length === 0) anchorKeys.push('externalid')
  const wanted = new Set([...targets.keys(), ...anchorKeys])
  const anchorSet = new Set(anchorKeys)

  const anchorFrom = (index: Map<string, unknown>): string | null => {
    for (const k of anchorKeys) {
      const a = anchorValue(index.get(k))
      if (a !== null) return a
    }
    return null
  }

  return {
    anchorOf(record) {
      // the edge runs this on every record of a batch: with one anchor key (the usual case), no
      // allocation, the same answer as map() (the first non-null value of a matching key decides)
      if (anchorKeys.length === 1) {
        const anchorKey = anchorKeys[0]!
        for (const key in record) {
          const value = record[key]
          if (value === null || value === undefined || normalizeKey(key) !== anchorKey) continue
          return anchorValue(value)
        }
        return null
      }
      return anchorFrom(indexRecord(record, anchorSet))
    },
    map(record) {
      const index = indexRecord(record, wanted)
      const core = new Map<string, string>()
      const custom: Record<string, StoredCustomField> = {}
      let approxBytes = 0
      // mapping order decides between two keys mapped to one target: the first present one wins
      for (const [from, list] of targets) {
        const value = index.get(from)
        if (value === undefined) continue
        for (const t of list) {
          if (t.kind === 'core') {
            if (core.has(t.name) || t.name === 'external_id') continue
            const text = textOf(value)
            if (text !== null) core.set(t.name, text)
          } else if (!Object.hasOwn(custom, t.name)) {
            const v = customFieldValue(t.definition!.type, value)
            if (v === null) continue
            custom[t.name] = { value: v, source: 'inbound_mapping', enriched_at: null }
            approxBytes += t.name.length + approxSize(v)
          }
        }
      }
      const patch: ContactPatch = {}
      const first = core.get('first_name')
      const last = core.get('last_name')
      const title = core.get('title')
      if (first !== undefined || last !== undefined || title !== undefined) {
        patch.identity = {}
        if (first !== undefined) patch.identity.first_name = first
        if (last !== undefined) patch.identity.last_name = last
        // the record's own join, which the mapping review compares; the merge joins again with
        // the names the contact already holds (domain/contacts/merge.ts, deriveFullName)
        if (first !== undefined || last !== undefined) patch.identity.full_name = [first, last].filter((x) => x !== undefined).join(' ')
        if (title !== undefined) patch.identity.title = title
      }
      const company = core.get('company')
      if (company !== undefined) patch.company = { name: company }
      const refused: RefusedValue[] = []
      const email = core.get('email')?.toLowerCase()
      if (email !== undefined && EMAIL.test(email)) patch.business_email = email
      else if (email !== undefined) refused.push({ field: 'email', value: core.get('email')!.slice(0, REFUSED_VALUE_CHARS), reason: 'not an email address' })
      if (Object.keys(custom).length > 0) patch.custom_fields = custom
      for (const v of core.values()) approxBytes += v.length * 2
      return { externalId: anchorFrom(index), patch, approxBytes, refused }
    },
  }
}

/** Partner CRM webhook body (contract 4.5): the aliases, in the order the contract gives them. */
const PARTNER_ALIASES: ReadonlyArray<[string, readonly string[]]> = [
  ['external_id', ['contactId', 'contact_id', 'id']],
  ['email', ['email']],
  ['first_name', ['firstName', 'first_name']],
  ['last_name', ['lastName', 'last_name']],
  ['company', ['company', 'companyName']],
  ['title', ['title']],
]

const CORE_KEYS: ReadonlySet<string> = new Set(CORE_TARGETS.map(normalizeKey))

/** The contact id of a partner CRM body (`contactId`, `contact_id`, then `id`), or null. */
export function partnerCrmContactId(body: InboundRecord): string | null {
  for (const key of ['contactId', 'contact_id', 'id']) {
    const a = anchorValue(body[key])
    if (a !== null) return a
  }
  return null
}

/** The location id of a partner CRM body (`locationId`, then `location_id`), or null. */
export function partnerCrmLocationId(body: InboundRecord): string | null {
  for (const key of ['locationId', 'location_id']) {
    const v = body[key]
    if (typeof v === 'string' && v.trim() !== '') return v.trim()
  }
  return null
}

/**
 * A partner CRM body as an inbound record with the six fallback keys: the contract's aliases
 * decide, exactly (`contactId` before `contact_id` before `id`, camelCase before snake_case),
 * before the connection's mappings see it. Other keys pass through for custom field mappings.
 */
export function partnerCrmRecord(body: InboundRecord): InboundRecord {
  const out: InboundRecord = {}
  const aliased = new Set<string>()
  for (const [target, keys] of PARTNER_ALIASES) {
    for (const k of keys) aliased.add(k)
    const key = keys.find((k) => body[k] !== null && body[k] !== undefined && (target !== 'external_id' || anchorValue(body[k]) !== null))
    if (key !== undefined) out[target] = body[key]
  }
  for (const [k, v] of Object.entries(body)) {
    // only the aliases feed the six fields; other keys are left for custom field mappings
    if (!aliased.has(k) && !CORE_KEYS.has(normalizeKey(k)) && k !== '__proto__') out[k] = v
  }
  return out
}

/** Partner CRM records always carry the six fields under their fallback names, plus the connection's custom field mappings. */
export function partnerCrmMappings(connectionMappings: readonly FieldMapping[]): FieldMapping[] {
  return [...FALLBACK_MAPPINGS, ...connectionMappings.filter((m) => typeof m?.to === 'string' && m.to.startsWith('custom_fields.'))]
}

/** One key of a previewed record: where its value goes, or why it goes nowhere. */
interface PreviewedKey {
  key: string
  /** the normalized form the mappings are matched on */
  normalized: string
  /** `email`, `custom_fields.plan`, …: where the value lands (empty when dropped) */
  targets: string[]
  /** why the value is not stored, when it is not */
  dropped: string | null
}

export interface MappingPreview {
  /** the record the mappings see (a partner CRM body after its aliases: partnerCrmRecord) */
  record: InboundRecord
  /** exactly what the worker maps the record to (the same mapper) */
  mapped: MappedRecord
  keys: PreviewedKey[]
  /** mappings that take no part, with the reason */
  ignoredMappings: Array<{ from: string; to: string; reason: string }>
}

/**
 * The mapping editor's preview (docs/portal.md): the record run through the very mapper the
 * upsert worker builds for the connection (upsert.ts: `createRecordMapper` over the connection's
 * mappings, the partner CRM aliases first for that shape), with each key explained. The stored
 * result is `mapped`, computed by the worker's code; the explanations only annotate it.
 */
export function previewMapping(
  shape: ConnectionType,
  connectionMappings: readonly FieldMapping[],
  definitions: readonly CustomFieldDefinition[],
  raw: InboundRecord,
): MappingPreview {
  const mappings = shape === 'partnercrm' ? partnerCrmMappings(connectionMappings) : connectionMappings
  const record = shape === 'partnercrm' ? partnerCrmRecord(raw) : raw
  const mapped = createRecordMapper(mappings, definitions).map(record)
  const effective = mappings.length > 0 ? mappings : FALLBACK_MAPPINGS
  const defs = new Set(definitions.map((d) => d.key))
  const ignoredMappings: MappingPreview['ignoredMappings'] = []
  const byFrom = new Map<string, string[]>()
  const anchorNamed = effective.some((m) => m.to === 'external_id')
  for (const m of effective) {
    const from = normalizeKey(m.from)
    if (from === '') {
      ignoredMappings.push({ from: m.from, to: m.to, reason: '"from" has no letter or digit' })
      continue
    }
    if (m.to.startsWith('custom_fields.') && !defs.has(m.to.slice('custom_fields.'.length))) {
      ignoredMappings.push({ from: m.from, to: m.to, reason: 'no custom field is defined with this key (Settings)' })
      continue
    }
    if (!(CORE_TARGETS as readonly string[]).includes(m.to) && !m.to.startsWith('custom_fields.')) {
      ignoredMappings.push({ from: m.from, to: m.to, reason: 'not a target' })
      continue
    }
    byFrom.set(from, [...(byFrom.get(from) ?? []), m.to])
  }
  if (!anchorNamed) byFrom.set('externalid', [...new Set([...(byFrom.get('externalid') ?? []), 'external_id'])])

  const seen = new Set<string>()
  const filled = new Set<string>()
  const stored = (t: string): boolean => {
    if (t === 'external_id') return mapped.externalId !== null
    if (t.startsWith('custom_fields.')) return Object.hasOwn(mapped.patch.custom_fields ?? {}, t.slice('custom_fields.'.length))
    if (t === 'email') return mapped.patch.business_email !== undefined
    if (t === 'company') return mapped.patch.company !== undefined
    return (mapped.patch.identity as Record<string, unknown> | undefined)?.[t] !== undefined
  }
  const keys: PreviewedKey[] = Object.keys(record).map((key) => {
    const normalized = normalizeKey(key)
    const value = record[key]
    const candidates = byFrom.get(normalized) ?? []
    const base = { key, normalized, targets: [] as string[] }
    if (candidates.length === 0)
      return {
        ...base,
        dropped:
          mappings.length > 0 || shape === 'partnercrm' ? 'no mapping names this key' : 'not one of the six fallback fields (the connection has no mappings)',
      }
    if (value === null || value === undefined) return { ...base, dropped: 'the value is null' }
    if (seen.has(normalized)) return { ...base, dropped: 'an earlier key with the same normalized name already gave the value' }
    seen.add(normalized)
    const targets: string[] = []
    const reasons: string[] = []
    for (const t of candidates) {
      if (filled.has(t)) {
        reasons.push(`${t}: an earlier mapping already filled it`)
        continue
      }
      if (stored(t)) {
        targets.push(t)
        filled.add(t)
      } else if (t === 'email') reasons.push('email: not an email address')
      else if (t === 'external_id') reasons.push(`external_id: must be a non-blank text of at most ${MAX_EXTERNAL_ID_LENGTH} characters, or a number`)
      else reasons.push(`${t}: the value is blank`)
    }
    return { ...base, targets, dropped: targets.length === 0 ? reasons.join('; ') || 'not stored' : null }
  })
  return { record, mapped, keys, ignoredMappings }
}
