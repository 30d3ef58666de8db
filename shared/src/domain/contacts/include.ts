import { AppError } from '../../errors/app-error.ts'

/**
 * The read contract's `include` (contract 4.7): a comma list of the two gated tiers. Anything
 * else, `custom_fields` included (tier 1 is always present, so naming it is an unknown tier),
 * empty items and repeated parameters answer 400 `invalid include`.
 */
export function parseInclude(raw: unknown): { contactHandles: boolean; sensitiveTraits: boolean } {
  const out = { contactHandles: false, sensitiveTraits: false }
  if (raw === undefined) return out
  if (typeof raw !== 'string') throw new AppError('invalid_include')
  for (const item of raw.split(',').map((s) => s.trim())) {
    if (item === 'contact_handles') out.contactHandles = true
    else if (item === 'sensitive_traits') out.sensitiveTraits = true
    else throw new AppError('invalid_include')
  }
  return out
}
