import { createHash } from 'node:crypto'
import type { VisitResolution } from '../../contract/visit-event.ts'
import type { ContactPatch, ContactRecord } from '../../model/records.ts'

/** Provider data of a visit -> what the provider writer asks the merge to write (pure). */

function hashed(prefix: string, value: string): string {
  return `${prefix}_${createHash('sha256').update(value).digest('base64url').slice(0, 32)}`
}

function normalizeNetworkUrl(url: string): string {
  return url
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/\/+$/, '')
}

/** Stable external id of a person known only from provider data: the same person maps to the same id. */
export function resolutionExternalId(resolution: VisitResolution, eventId: string): string {
  const nu = resolution.identity?.network_url
  if (nu) return hashed('nu', normalizeNetworkUrl(nu))
  const email = resolution.handles?.business_email
  if (email) return hashed('em', email.trim().toLowerCase())
  return hashed('ev', eventId)
}

/**
 * Provider data -> the patch the provider writer asks the merge to apply. Derived members are
 * never taken from the provider: `full_name` is dropped here and joined by the merge from the
 * names the contact holds (contract 2.1; domain/contacts/merge.ts, deriveFullName); a phone's
 * `callable` is not stored at all (assembleContact derives it from `dnc_known` and `dnc`).
 */
export function patchFromResolution(resolution: VisitResolution, existing: ContactRecord | null): ContactPatch {
  const patch: ContactPatch = {}
  if (resolution.subject_type && !existing) patch.subject_type = resolution.subject_type
  if (resolution.identity) {
    const { full_name: _sent, ...identity } = resolution.identity
    // network_url is half of the row's unique key: the provider never overwrites one
    if (existing?.identity.network_url) delete identity.network_url
    patch.identity = identity
  }
  if (resolution.company) patch.company = { ...resolution.company }
  if (resolution.location) patch.location = { ...resolution.location }
  const h = resolution.handles
  if (h?.business_email) patch.business_email = h.business_email.trim().toLowerCase()
  if (h?.emails) patch.emails = h.emails.map((e) => ({ value: e.value, kind: e.kind ?? null, verified: e.verified ?? null }))
  if (h?.phones) patch.phones = h.phones.map((p) => ({ value: p.value, kind: p.kind ?? null, dnc: p.dnc ?? null, dnc_known: p.dnc_known ?? false }))
  if (resolution.traits) patch.traits = resolution.traits.map((t) => ({ key: t.key, label: t.label ?? null, value: t.value, group: t.group }))
  return patch
}
