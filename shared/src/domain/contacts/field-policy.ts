import type { FieldPolicy } from '../../contract/field-policy.ts'
import type { Tier } from '../../model/records.ts'
import { MISSING_REASONS, type MissingReason } from './key-set.ts'

/**
 * Per-delivery accounting: `included` counts the keys of K delivered as values, `missing` the
 * keys in `missing`, `missing_reason` the latter by reason (all five reasons, zero included).
 * `withheld_tiers` names the gated tiers this receiver did not get.
 */
export function fieldPolicyOf(
  permittedTiers: readonly Tier[],
  enabledTiers: readonly Tier[],
  included: number,
  missing: Record<string, MissingReason>,
): FieldPolicy {
  const reasons = Object.fromEntries(MISSING_REASONS.map((r) => [r, 0])) as Record<MissingReason, number>
  let count = 0
  for (const reason of Object.values(missing)) {
    reasons[reason]++
    count++
  }
  const enabled = new Set(enabledTiers)
  const withheld: FieldPolicy['withheld_tiers'] = []
  if (!enabled.has(2)) withheld.push('contact_handles')
  if (!enabled.has(3)) withheld.push('sensitive_traits')
  return {
    permitted_tiers: [...new Set(permittedTiers)].sort(),
    enabled_tiers: [...enabled].sort(),
    withheld_tiers: withheld,
    included,
    missing: count,
    missing_reason: reasons,
  }
}
