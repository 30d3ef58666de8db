import { Type, type Static } from 'typebox'
import { Uuid } from './common.ts'

/** The read contract's `include` query parameter (contract 4.7). */

/**
 * A comma list of the two gated tiers. The schema accepts any string on purpose: an unknown
 * value (`custom_fields` included) is rejected by the handler (domain/contacts/include.ts) with
 * its own 400 rather than a generic validation failure.
 */
export const IncludeParam = Type.String({
  title: 'IncludeParam',
  maxLength: 200,
  description:
    'comma list of gated tiers: `contact_handles`, `sensitive_traits`. Anything else, `custom_fields` included (tier 1 is always present), answers 400',
  examples: ['contact_handles', 'contact_handles,sensitive_traits'],
})

export const IncludeQuery = Type.Object({ include: Type.Optional(IncludeParam) }, { title: 'IncludeQuery' })

/** `GET /api/v1/contacts/{id}`: the contact id (the `id` of a Contact, the `contactId` of link minting). */
export const ContactIdParams = Type.Object({ id: Uuid({ description: 'the contact id; either case' }) })

export type IncludeQuery = Static<typeof IncludeQuery>
