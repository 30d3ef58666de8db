import { Type, type Static } from 'typebox'
import { IntegerEnum, StringEnum } from './common.ts'
import { TIERS } from '../model/records.ts'

/** Per-delivery accounting of what the receiver got and did not get (contract 2.4). */

const WITHHELD_TIER_NAMES = ['contact_handles', 'sensitive_traits'] as const

const count = () => Type.Integer({ minimum: 0 })

export const MissingReasonCounts = Type.Object(
  {
    no_source: Type.Optional(count()),
    not_enriched: Type.Optional(count()),
    unmapped: Type.Optional(count()),
    withheld_compliance: Type.Optional(count()),
    withheld_tier: Type.Optional(count()),
  },
  { title: 'MissingReasonCounts', description: 'count per reason; keys are only the five reasons', additionalProperties: false },
)

export const FieldPolicy = Type.Object(
  {
    permitted_tiers: Type.Array(IntegerEnum(TIERS), { description: 'tiers the tenant may enable' }),
    enabled_tiers: Type.Array(IntegerEnum(TIERS), { description: 'tiers this integration has on' }),
    withheld_tiers: Type.Array(StringEnum(WITHHELD_TIER_NAMES)),
    included: Type.Integer({ minimum: 0, description: 'count of keys delivered' }),
    missing: Type.Integer({ minimum: 0, description: 'count of keys in `missing`' }),
    missing_reason: MissingReasonCounts,
  },
  { title: 'FieldPolicy', additionalProperties: false },
)

export type MissingReasonCounts = Static<typeof MissingReasonCounts>
export type FieldPolicy = Static<typeof FieldPolicy>
