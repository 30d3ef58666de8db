import type { PlatformDeps } from '../../ports/deps.ts'
import type { VisitEvent } from '../../contract/visit-event.ts'
import { patchFromResolution, resolutionExternalId } from './resolution-patch.ts'
import type { ContactRecord, ContactUpsertInput } from '../../model/records.ts'
import { mergeContact } from '../contacts/merge.ts'
import { resolveLinkToken } from '../links/resolve.ts'

/** Source of persons first created from provider data. */
export const RESOLUTION_SOURCE = 'resolution'

export type PersonResolution = { ok: true; contact: ContactRecord; via: 'contact_id' | 'lsv' | 'resolution' } | { ok: false; reason: string }

/** Event time of a visit: when it was seen, else when it was emitted, else when it was queued. */
function visitTime(event: VisitEvent, publishedAt: string): string {
  return event.visit?.seen_at ?? event.emitted_at ?? publishedAt
}

/**
 * The person a visit names: by `contact_id`, by an `lsv` link token of this account, or by
 * upserting the provider `resolution` (lowest-precedence writer; matched on identity.network_url,
 * then business email; otherwise a new person with source `resolution`). Every path ends with
 * the stored record, read back after the write.
 */
export async function resolveVisitPerson(deps: PlatformDeps, event: VisitEvent, publishedAt: string): Promise<PersonResolution> {
  const accountId = event.account_id
  if (event.contact_id !== undefined) {
    const contact = await deps.contacts.get(accountId, event.contact_id)
    return contact ? { ok: true, contact, via: 'contact_id' } : { ok: false, reason: 'contact_id not found' }
  }
  if (event.lsv !== undefined) {
    const link = await resolveLinkToken(deps, event.lsv, { accountId })
    if (!link || link.accountId !== accountId) return { ok: false, reason: 'lsv token not found' }
    const contact = await deps.contacts.get(accountId, link.contactId)
    return contact ? { ok: true, contact, via: 'lsv' } : { ok: false, reason: 'lsv contact not found' }
  }
  const resolution = event.resolution!
  let existing: ContactRecord | null = null
  const nu = resolution.identity?.network_url
  if (nu) existing = await deps.contacts.findByNetworkUrl(accountId, nu)
  const email = resolution.handles?.business_email?.trim().toLowerCase()
  if (!existing && email) existing = await deps.contacts.findByBusinessEmail(accountId, email)
  const input: ContactUpsertInput = {
    source: existing?.source ?? RESOLUTION_SOURCE,
    external_id: existing?.external_id ?? resolutionExternalId(resolution, event.id),
    writer: 'provider',
    at: visitTime(event, publishedAt),
    origin: `visit:${event.id}`,
    resolved_by: resolution.resolved_by,
    patch: patchFromResolution(resolution, existing),
  }
  // the write's change row goes out from the contact-write seam; a redelivered visit (one whose
  // reaction failed after the write) finds its write stored and has it published again
  const [outcome] = await deps.contacts.upsertBatch(accountId, [input], mergeContact, { recheckApplied: true })
  if (!outcome || outcome.result === 'failed') throw new Error(`resolution upsert failed: ${outcome?.error ?? 'no outcome'}`)
  const contact = await deps.contacts.get(accountId, outcome.contactId)
  if (!contact) throw new Error('resolved contact not readable after upsert')
  return { ok: true, contact, via: 'resolution' }
}
