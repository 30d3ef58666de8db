import { CONTRACT_VERSION } from '../../contract/version.ts'
import type { VisitEvent } from '../../contract/visit-event.ts'
import type { EmittedContact } from '../../contract/contact.ts'
import type { FieldPolicy } from '../../contract/field-policy.ts'
import type { EmittedWebhookEventV2, WebhookVisit } from '../../contract/webhook-event.ts'

const VISIT_MEMBERS = ['captured_url', 'domain_id', 'referrer', 'visitor_id', 'seen_at'] as const

/** `visitor.identified` for one receiver; empty optional members are omitted, never sent blank. */
export function buildWebhookEventV2(args: {
  event: VisitEvent
  subject: EmittedContact
  fieldPolicy: FieldPolicy
  isRepeat: boolean
  emittedAt: string
}): EmittedWebhookEventV2 {
  const { event } = args
  const body: EmittedWebhookEventV2 = {
    event: 'visitor.identified',
    contract_version: CONTRACT_VERSION,
    id: event.id,
    emitted_at: event.emitted_at ?? args.emittedAt,
    tier: event.tier,
    is_repeat: args.isRepeat,
    subject: args.subject,
    field_policy: args.fieldPolicy,
  }
  if (event.visit) {
    const visit: WebhookVisit = {}
    for (const m of VISIT_MEMBERS) if (event.visit[m] !== undefined) visit[m] = event.visit[m] ?? null
    if (Object.keys(visit).length > 0) body.visit = visit
  }
  if (event.classification) body.classification = event.classification
  if (event.served_from) body.served_from = event.served_from
  return body
}
