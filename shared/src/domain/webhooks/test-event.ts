import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import { assembleContact } from '../contacts/assemble.ts'
import { loadAccountContactContext } from '../contacts/caller.ts'
import { mergeContact } from '../contacts/merge.ts'
import { contactIdFor } from '../../model/ids.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import { buildWebhookEventV2 } from './build-event.ts'
import { createDelivery, type EnqueueDeps } from './deliveries.ts'

/** Test events are marked twice: the id starts with this, and `classification` is `test`. */
export const TEST_EVENT_ID_PREFIX = 'evt_test_'
const TEST_CLASSIFICATION = 'test'
/** The made-up person of a test event (source `test`): never stored as a contact. */
const TEST_SOURCE = 'test'

/**
 * A test `visitor.identified` for one integration: a contract-shaped body about a made-up person
 * (Ada Example, example.com), shaped by the integration's tiers like a real event, delivered
 * through the normal path (a delivery record, a task, the signed POST, the delivery log, retries).
 * Active v2 integrations only: a v1 receiver is never sent a v2 body, a disabled one nothing.
 */
export async function sendTestEvent(
  deps: EnqueueDeps & Pick<PlatformDeps, 'deliveries' | 'config'>,
  accountId: string,
  integrationId: string,
): Promise<DeliveryRecord> {
  const account = await deps.tenants.getAccount(accountId)
  if (!account) throw new AppError('not_found')
  const integration = await deps.tenants.getIntegration(integrationId)
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  if (!integration.active || integration.payload_version !== 2) throw new AppError('conflict')
  const now = new Date(deps.clock.now()).toISOString()
  const eventId = `${TEST_EVENT_ID_PREFIX}${randomBytes(12).toString('base64url')}`
  const record = mergeContact(
    null,
    {
      source: TEST_SOURCE,
      external_id: eventId,
      writer: 'provider',
      at: now,
      origin: `${eventId}:0`,
      resolved_by: 'person',
      patch: {
        subject_type: 'person_profile',
        identity: { first_name: 'Ada', last_name: 'Example', full_name: 'Ada Example', title: 'Head of Testing' },
        company: { name: 'Example Inc', domain: 'example.com', website: 'https://example.com' },
        business_email: 'ada@example.com',
        emails: [{ value: 'ada@example.com', kind: 'business', verified: true }],
      },
    },
    accountId,
  )
  if (!record) throw new Error('the test contact could not be built')
  record.id = contactIdFor(accountId, TEST_SOURCE, eventId)
  const context = await loadAccountContactContext(deps.tenants, account)
  const { contact: subject, fieldPolicy } = assembleContact(record, {
    permittedTiers: account.permitted_tiers,
    contactHandles: integration.tiers.contact_handles,
    sensitiveTraits: integration.tiers.sensitive_traits,
    definitions: context.definitions,
    mappedCustomFieldKeys: context.mappedCustomFieldKeys,
    portalBaseUrl: deps.config.portalBaseUrl,
    resolvedByLabel: 'person',
  })
  const body = buildWebhookEventV2({
    event: {
      id: eventId,
      account_id: accountId,
      tier: 'person',
      emitted_at: now,
      classification: TEST_CLASSIFICATION,
      visit: { captured_url: 'https://example.com/pricing', seen_at: now },
    },
    subject,
    fieldPolicy,
    isRepeat: false,
    emittedAt: now,
  })
  return createDelivery(deps, { accountId, integrationId, eventId, body: JSON.stringify(body), now })
}
