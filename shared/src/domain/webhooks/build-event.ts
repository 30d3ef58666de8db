import { CONTRACT_VERSION } from '../../contract/version.ts'
import type { VisitEvent } from '../../contract/visit-event.ts'
import type { ContactWire } from '../contacts/assemble.ts'
import type { FieldPolicyWire } from '../contacts/field-policy.ts'

/** The wire WebhookEventV2 (contract section 6); the TypeBox schema is the authority. */
export interface WebhookEventV2Wire {
  event: 'visitor.identified'
  contract_version: typeof CONTRACT_VERSION
  id: string
  emitted_at: string
  tier: 'company' | 'person'
  is_repeat: boolean
  subject: ContactWire
  field_policy?: FieldPolicyWire
  visit?: Record<string, string | null>
  classification?: string
  served_from?: string
}

const VISIT_MEMBERS = ['captured_url', 'domain_id', 'referrer', 'visitor_id', 'seen_at'] as const

/** `visitor.identified` for one receiver; empty optional members are omitted, never sent blank. */
export function buildWebhookEventV2(args: {
  event: VisitEvent
  subject: ContactWire
  fieldPolicy: FieldPolicyWire
  isRepeat: boolean
  emittedAt: string
}): WebhookEventV2Wire {
  const { event } = args
  const body: WebhookEventV2Wire = {
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
    const visit: Record<string, string | null> = {}
    for (const m of VISIT_MEMBERS) if (event.visit[m] !== undefined) visit[m] = event.visit[m] ?? null
    if (Object.keys(visit).length > 0) body.visit = visit
  }
  if (event.classification) body.classification = event.classification
  if (event.served_from) body.served_from = event.served_from
  return body
}
