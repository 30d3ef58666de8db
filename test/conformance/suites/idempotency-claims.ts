import { afterAll, beforeAll, expect, it } from 'vitest'
import type { IdempotencyClaims } from '@lsv/shared/ports/idempotency-claims.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import type { TwoInstances } from './two-instances.ts'

/** The behaviour every IdempotencyClaims adapter must share. Call inside a `describe`. */
export function idempotencyClaimsConformance(open: () => Promise<TwoInstances<IdempotencyClaims>>): void {
  let harness: TwoInstances<IdempotencyClaims>
  let claims: IdempotencyClaims

  beforeAll(async () => {
    harness = await open()
    claims = harness.store
  })
  afterAll(async () => {
    await harness.close()
  })

  it('claims a key once until the claim expires', async () => {
    const key = `claim-${randomSuffix()}`
    const t = Date.now()
    expect(await claims.claimOnce(key, 60, t)).toBe(true)
    expect(await claims.claimOnce(key, 60, t)).toBe(false)
    expect(await claims.claimOnce(key, 60, t + 59_000)).toBe(false)
    expect(await claims.claimOnce(`${key}-other`, 60, t)).toBe(true)
    // expired: claimable again, and the new claim holds for its own ttl
    expect(await claims.claimOnce(key, 60, t + 61_000)).toBe(true)
    expect(await claims.claimOnce(key, 60, t + 100_000)).toBe(false)
    // concurrent claims: exactly one wins
    const raced = `claim-race-${randomSuffix()}`
    const results = await Promise.all([1, 2, 3].map(() => claims.claimOnce(raced, 60, t)))
    expect(results.filter(Boolean)).toHaveLength(1)
  })

  it('two instances racing for one key: exactly one wins, and the loser sees it claimed', async () => {
    const t = Date.now()
    for (let round = 0; round < 5; round++) {
      const key = `claim-two-${randomSuffix()}`
      const results = await Promise.all([harness.store, harness.other, harness.store, harness.other].map((c) => c.claimOnce(key, 60, t)))
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await harness.other.claimOnce(key, 60, t + 1_000)).toBe(false)
      expect(await harness.store.claimOnce(key, 60, t + 1_000)).toBe(false)
    }
  })
}
