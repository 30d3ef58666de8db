import { CONTRACT_VERSION } from '../../contract/version.ts'
import type {
  CustomField,
  EmittedContact,
  EmittedContactHandles,
  EmittedContactProvenance,
  EmittedEmailHandle,
  EmittedPhoneHandle,
  EmittedTrait,
} from '../../contract/contact.ts'
import type { FieldPolicy } from '../../contract/field-policy.ts'
import type { ContactRecord, CustomFieldDefinition, Tier } from '../../model/records.ts'
import {
  BUSINESS_EMAIL_KEY,
  COMPANY_MEMBERS,
  EMAILS_KEY,
  IDENTITY_MEMBERS,
  LOCATION_MEMBERS,
  PHONES_KEY,
  TRAITS_KEY,
  customFieldKey,
  emailKey,
  phoneKey,
  sortedDefinitions,
  traitKeys,
  type MissingReason,
} from './key-set.ts'
import { fieldPolicyOf } from './field-policy.ts'

/** Who the Contact is assembled for: one integration (webhook) or one read-contract call. */
export interface ContactCaller {
  /** tiers the account may enable (AccountRecord.permitted_tiers) */
  permittedTiers: readonly Tier[]
  /** tier 2 requested / enabled on the integration; released only when tier 2 is permitted */
  contactHandles: boolean
  /** tier 3 requested / enabled on the integration; released only when tier 3 is permitted */
  sensitiveTraits: boolean
  /** the account's custom field definitions */
  definitions: readonly CustomFieldDefinition[]
  /**
   * custom field keys some connection of the account maps inbound data to; a definition that
   * no mapping targets is `unmapped` when it has no value. null: not known (treated as mapped).
   */
  mappedCustomFieldKeys: ReadonlySet<string> | null
  /** absolute portal origin (config.portalBaseUrl) for `links` */
  portalBaseUrl: string
  /** label shown instead of the vendor stamp in `provenance.resolved_by` */
  resolvedByLabel?: string
}

export interface AssembledContact {
  /** what we emit: a refinement of the contract's Contact (contract/contact.ts says why there are two) */
  contact: EmittedContact
  fieldPolicy: FieldPolicy
  /** tiers actually released to this caller */
  enabledTiers: Tier[]
}

/** A value worth emitting: not null or undefined, not a blank string, not an empty array (a guard, so what passes is typed non-null). */
function hasValue<T>(v: T | null | undefined): v is T {
  if (v === null || v === undefined) return false
  if (typeof v === 'string') return v.trim() !== ''
  if (Array.isArray(v)) return v.length > 0
  return true
}

/** Masks the insert-only vendor stamp: customers see which kind of resolution, never the vendor. */
function resolvedByLabelOf(record: ContactRecord): string {
  return record.subject_type === 'company_profile' ? 'company' : 'person'
}

/** Absolute links of a contact: the portal page and the read-contract URL. */
function contactLinks(portalBaseUrl: string, id: string): { portal: string; self: string } {
  const base = portalBaseUrl.replace(/\/+$/, '')
  return { portal: `${base}/contacts/${encodeURIComponent(id)}`, self: `${base}/api/v1/contacts/${encodeURIComponent(id)}` }
}

/**
 * Builds the Contact one caller receives from a stored record, accounting for every key of K
 * (key-set.ts): a value, or a reason in `missing`. Also returns the FieldPolicy counting them.
 *
 * Reasons: `withheld_tier` (the key's tier is off for this caller or not permitted),
 * `withheld_compliance` (a phone that is not callable), `unmapped` (a custom field no
 * connection maps to), `not_enriched` (an enrichable key on a person no provider has resolved
 * yet), `no_source` (everything else: the sources we have carry no value).
 */
export function assembleContact(record: ContactRecord, caller: ContactCaller): AssembledContact {
  const permitted = new Set(caller.permittedTiers)
  const handlesOn = caller.contactHandles && permitted.has(2)
  const traitsOn = caller.sensitiveTraits && permitted.has(3)
  const enriched = record.resolved_by !== null
  const absentReason: MissingReason = enriched ? 'no_source' : 'not_enriched'
  const missing: Record<string, MissingReason> = {}
  let included = 0

  const members = (group: 'identity' | 'company' | 'location', names: readonly string[], from: Record<string, string | null | undefined>) => {
    const out: Record<string, string> = {}
    for (const m of names) {
      const v = from[m]
      if (typeof v === 'string' && hasValue(v)) {
        out[m] = v
        included++
      } else missing[`${group}.${m}`] = absentReason
    }
    return out
  }
  const identity = members('identity', IDENTITY_MEMBERS, record.identity as Record<string, string | null | undefined>)
  const company = members('company', COMPANY_MEMBERS, record.company as Record<string, string | null | undefined>)
  const location = members('location', LOCATION_MEMBERS, record.location as Record<string, string | null | undefined>)

  // every handle array is emitted, empty when the tier is off (contract 2.1)
  const emails: EmittedEmailHandle[] = []
  const phones: EmittedPhoneHandle[] = []
  const handles: EmittedContactHandles = hasValue(record.business_email) ? { business_email: record.business_email, emails, phones } : { emails, phones }
  if (handles.business_email !== undefined) included++
  else missing[BUSINESS_EMAIL_KEY] = absentReason

  // tier 2
  if (!handlesOn) {
    missing[EMAILS_KEY] = 'withheld_tier'
    missing[PHONES_KEY] = 'withheld_tier'
  } else {
    if (record.emails.length === 0) missing[EMAILS_KEY] = absentReason
    record.emails.forEach((e, i) => {
      if (!hasValue(e.value)) {
        missing[emailKey(i)] = 'no_source'
        return
      }
      emails.push({ value: e.value, kind: e.kind ?? null, verified: e.verified ?? null })
      included++
    })
    if (record.phones.length === 0) missing[PHONES_KEY] = absentReason
    record.phones.forEach((p, i) => {
      if (!hasValue(p.value)) {
        missing[phoneKey(i)] = 'no_source'
        return
      }
      // contract 2.1: callable = dnc_known AND NOT dnc; a number that is not callable is never emitted
      if (p.dnc_known !== true || p.dnc === true) {
        missing[phoneKey(i)] = 'withheld_compliance'
        return
      }
      // here dnc_known is true and dnc is false or null, so callable is true (EmittedPhoneHandle)
      phones.push({ value: p.value, kind: p.kind ?? null, dnc: p.dnc ?? null, dnc_known: p.dnc_known, callable: true })
      included++
    })
  }

  // tier 3
  const traits: EmittedTrait[] = []
  if (record.traits.length === 0) missing[TRAITS_KEY] = traitsOn ? absentReason : 'withheld_tier'
  const tKeys = traitKeys(record.traits)
  record.traits.forEach((t, i) => {
    if (!traitsOn) missing[tKeys[i]!] = 'withheld_tier'
    else if (!hasValue(t.value)) missing[tKeys[i]!] = 'no_source'
    else {
      traits.push({ key: t.key ?? null, label: t.label ?? null, value: t.value, group: t.group })
      included++
    }
  })

  // tier 1, always released
  const customFields: CustomField[] = []
  for (const d of sortedDefinitions(caller.definitions)) {
    const stored = record.custom_fields[d.key]
    if (stored && hasValue(stored.value)) {
      customFields.push({
        key: d.key,
        label: d.label,
        type: d.type,
        value: stored.value,
        source: stored.source,
        enriched_at: stored.source === 'ai_enrichment' ? (stored.enriched_at ?? null) : null,
      })
      included++
    } else {
      const mapped = caller.mappedCustomFieldKeys === null || caller.mappedCustomFieldKeys.has(d.key)
      missing[customFieldKey(d.key)] = mapped ? 'no_source' : 'unmapped'
    }
  }

  const provenance: EmittedContactProvenance = {
    first_seen_at: record.first_seen_at,
    last_seen_at: record.last_seen_at,
    name_source: record.name_source ?? null,
  }
  if (record.resolved_by !== null && record.resolved_by !== undefined) {
    provenance.resolved_by = caller.resolvedByLabel ?? resolvedByLabelOf(record)
  }

  const contact: EmittedContact = {
    object: 'contact',
    id: record.id,
    subject_type: record.subject_type,
    contract_version: CONTRACT_VERSION,
    identity,
    company,
    location,
    handles,
    traits,
    custom_fields: customFields,
    missing,
    provenance,
    links: contactLinks(caller.portalBaseUrl, record.id),
  }
  const enabledTiers: Tier[] = [1]
  if (handlesOn) enabledTiers.push(2)
  if (traitsOn) enabledTiers.push(3)
  return { contact, enabledTiers, fieldPolicy: fieldPolicyOf(caller.permittedTiers, enabledTiers, included, missing) }
}
