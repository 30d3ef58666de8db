import type { PlatformDeps } from '../../ports/deps.ts'
import type { VisitEvent } from '../../contract/visit-event.ts'
import { assembleContact } from '../contacts/assemble.ts'
import { loadAccountContactContext } from '../contacts/caller.ts'
import { buildWebhookEventV2 } from '../webhooks/build-event.ts'
import { createDelivery, deliveryIdFor, resumeDelivery } from '../webhooks/deliveries.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import { resolveVisitPerson } from './resolve-person.ts'
import { boundEventTimes } from './event-time.ts'

/** Idempotency keys live long enough to outlast any redelivery of the queue. */
const EVENT_CLAIM_TTL_S = 7 * 24 * 3600
/** "Seen" markers drive `is_repeat`; kept for two years. */
const SEEN_TTL_S = 2 * 365 * 24 * 3600

export type VisitOutcome =
  | { result: 'duplicate' }
  | { result: 'skipped'; reason: string }
  | { result: 'delivered'; contactId: string; isRepeat: boolean; deliveryIds: string[] }

/**
 * One visit event, end to end: bound its times to the clock, claim its id (a redelivered event is handled once), resolve
 * the person, decide `is_repeat`, and create one delivery per active v2 integration of the
 * account. A body is built per integration because each receiver's tiers shape the subject.
 */
export async function handleVisitEvent(deps: PlatformDeps, received: VisitEvent, publishedAt: string): Promise<VisitOutcome> {
  // an event time far past the clock would win every later merge (event-time.ts)
  const { event, adjusted } = boundEventTimes(received, deps.clock.now(), publishedAt)
  if (adjusted.length > 0) deps.logger.warn({ eventId: event.id, adjusted }, 'visit event time past the clock replaced by the publish time')
  const account = await deps.tenantLookups.getAccount(event.account_id)
  if (!account) return { result: 'skipped', reason: 'unknown account' }
  if (!account.active) return { result: 'skipped', reason: 'account inactive' }
  const first = await deps.claims.claimOnce(`visit:${account.id}:${event.id}`, EVENT_CLAIM_TTL_S)
  const integrations = (await deps.tenantLookups.listIntegrations(account.id)).filter((i) => i.active && i.payload_version === 2)
  // A claimed event is either a duplicate or a redelivery after a failure part-way. Deliveries
  // have deterministic ids: when all exist, it is a duplicate; otherwise finish the work. Either
  // way each existing delivery still waiting gets its task enqueued again under the same name: a
  // no-op while the task is live, its way back when the record was written but the enqueue
  // failed (Pub/Sub redelivers the event because it was nacked) or its queue gave up on it.
  let previous: DeliveryRecord | null = null
  if (!first) {
    const existing = await Promise.all(integrations.map((i) => deps.deliveries.get(deliveryIdFor(event.id, i.id))))
    if (existing.every((d) => d !== null)) {
      for (const d of existing) await resumeDelivery(deps, d)
      return { result: 'duplicate' }
    }
    previous = existing.find((d) => d !== null) ?? null
  }

  const person = await resolveVisitPerson(deps, event, publishedAt)
  if (!person.ok) return { result: 'skipped', reason: person.reason }
  const contact = person.contact
  const isRepeat = previous
    ? (JSON.parse(previous.body) as { is_repeat: boolean }).is_repeat
    : !(await deps.claims.claimOnce(`seen:${account.id}:${contact.id}`, SEEN_TTL_S))

  if (integrations.length === 0) return { result: 'delivered', contactId: contact.id, isRepeat, deliveryIds: [] }
  const context = await loadAccountContactContext(deps.tenantLookups, account)
  const now = new Date(deps.clock.now()).toISOString()
  const deliveryIds: string[] = []
  for (const integration of integrations) {
    const { contact: subject, fieldPolicy } = assembleContact(contact, {
      permittedTiers: account.permitted_tiers,
      contactHandles: integration.tiers.contact_handles,
      sensitiveTraits: integration.tiers.sensitive_traits,
      definitions: context.definitions,
      mappedCustomFieldKeys: context.mappedCustomFieldKeys,
      portalBaseUrl: deps.config.portalBaseUrl,
      resolvedByLabel: event.tier,
    })
    const body = buildWebhookEventV2({ event, subject, fieldPolicy, isRepeat, emittedAt: now })
    const delivery = await createDelivery(deps, {
      accountId: account.id,
      integrationId: integration.id,
      eventId: event.id,
      body: JSON.stringify(body),
      now,
    })
    deliveryIds.push(delivery.id)
  }
  return { result: 'delivered', contactId: contact.id, isRepeat, deliveryIds }
}
