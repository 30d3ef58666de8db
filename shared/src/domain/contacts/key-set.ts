import type { ContactRecord, CustomFieldDefinition, TraitRecord } from '../../model/records.ts'

/**
 * The caller's key set K (docs/contact-object.md). Every key of K appears exactly once in an
 * assembled Contact: as a value, or in `missing` with one of the five reasons.
 *
 * - identity.<member>   first_name, last_name, full_name, title, seniority, network_url
 * - company.<member>    name, domain, website, industry, employee_count, est_revenue, network_url
 * - location.<member>   city, state, postal_code
 * - handles.business_email
 * - tier 2, `handles.emails[<i>]` / `handles.phones[<i>]` for each stored handle; when the
 *   record has none, or the tier is off for the caller, the single aggregate key
 *   `handles.emails` / `handles.phones` (a tier that is off does not reveal how many exist)
 * - tier 3, `traits.<trait key>` for each stored trait (`traits[<i>]` when the key is null or
 *   repeated); when the record has none, the aggregate key `traits`
 * - tier 1, `custom_fields.<key>` for each custom field definition of the account
 */

export { MISSING_REASONS, type MissingReason } from '../../contract/common.ts'

export const IDENTITY_MEMBERS = ['first_name', 'last_name', 'full_name', 'title', 'seniority', 'network_url'] as const
export const COMPANY_MEMBERS = ['name', 'domain', 'website', 'industry', 'employee_count', 'est_revenue', 'network_url'] as const
export const LOCATION_MEMBERS = ['city', 'state', 'postal_code'] as const

export const BUSINESS_EMAIL_KEY = 'handles.business_email'
export const EMAILS_KEY = 'handles.emails'
export const PHONES_KEY = 'handles.phones'
export const TRAITS_KEY = 'traits'

export function emailKey(i: number): string {
  return `${EMAILS_KEY}[${i}]`
}
export function phoneKey(i: number): string {
  return `${PHONES_KEY}[${i}]`
}
export function customFieldKey(key: string): string {
  return `custom_fields.${key}`
}

/** One K key per stored trait, stable for a given record. */
export function traitKeys(traits: readonly TraitRecord[]): string[] {
  const counts = new Map<string, number>()
  for (const t of traits) if (t.key) counts.set(t.key, (counts.get(t.key) ?? 0) + 1)
  return traits.map((t, i) => (t.key && counts.get(t.key) === 1 ? `${TRAITS_KEY}.${t.key}` : `${TRAITS_KEY}[${i}]`))
}

export interface KeySetOptions {
  contactHandles: boolean
  sensitiveTraits: boolean
  definitions: readonly CustomFieldDefinition[]
}

/** K for one record and one caller, in a stable order (the order `missing` is written in). */
export function keySetOf(record: ContactRecord, options: KeySetOptions): string[] {
  const k: string[] = []
  for (const m of IDENTITY_MEMBERS) k.push(`identity.${m}`)
  for (const m of COMPANY_MEMBERS) k.push(`company.${m}`)
  for (const m of LOCATION_MEMBERS) k.push(`location.${m}`)
  k.push(BUSINESS_EMAIL_KEY)
  if (options.contactHandles && record.emails.length > 0) for (let i = 0; i < record.emails.length; i++) k.push(emailKey(i))
  else k.push(EMAILS_KEY)
  if (options.contactHandles && record.phones.length > 0) for (let i = 0; i < record.phones.length; i++) k.push(phoneKey(i))
  else k.push(PHONES_KEY)
  if (record.traits.length > 0) k.push(...traitKeys(record.traits))
  else k.push(TRAITS_KEY)
  for (const d of sortedDefinitions(options.definitions)) k.push(customFieldKey(d.key))
  return k
}

export function sortedDefinitions(definitions: readonly CustomFieldDefinition[]): CustomFieldDefinition[] {
  return [...definitions].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}
