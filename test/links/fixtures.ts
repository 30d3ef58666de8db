import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ContactRecord, ContactUpsertInput } from '@lsv/shared/model/records.ts'
import type { MergeFn } from '@lsv/shared/ports/contact-store.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'

/** Creates the record on first write, changes nothing afterwards: enough to seed contacts. */
const seedMerge: MergeFn = (existing: ContactRecord | null, input: ContactUpsertInput, accountId: string) => {
  if (existing) return null
  return {
    id: contactIdFor(accountId, input.source, input.external_id),
    account_id: accountId,
    source: input.source,
    external_id: input.external_id,
    subject_type: 'contact',
    identity: {},
    company: {},
    location: {},
    business_email: null,
    emails: [],
    phones: [],
    traits: [],
    custom_fields: {},
    name_source: null,
    resolved_by: null,
    first_seen_at: input.at,
    last_seen_at: input.at,
    updated_at: input.at,
    versions: {},
  }
}

export async function seedContact(deps: PlatformDeps, accountId: string, source: string, externalId: string): Promise<string> {
  const [outcome] = await deps.contacts.upsertBatch(
    accountId,
    [
      {
        source,
        external_id: externalId,
        writer: 'manual',
        at: new Date(deps.clock.now()).toISOString(),
        origin: `seed:${externalId}`,
        patch: {},
      },
    ],
    seedMerge,
  )
  if (!outcome || outcome.result === 'failed') throw new Error(`seed failed: ${outcome?.error}`)
  return outcome.contactId
}
