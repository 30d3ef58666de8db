import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Counters } from '@lsv/shared/ports/counters.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import type { TwoInstances } from './two-instances.ts'

/** a far-future instant unique per run: the suite's counters expire there */
const BASE = Date.UTC(2041, 0, 1) + Math.floor(Math.random() * 3650) * 86_400_000

/** The counters port (ports/counters.ts), on two instances over one store. */
export function countersConformance(open: () => Promise<TwoInstances<Counters>>): void {
  let h: TwoInstances<Counters>
  const key = () => `counter:${randomSuffix()}`
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => h.close())

  it('adds across instances, several keys in one call; a missing counter reads 0', async () => {
    const [a, b] = [key(), key()]
    await h.store.apply(
      [
        { key: a, add: 2 },
        { key: b, add: 1 },
      ],
      BASE,
    )
    await Promise.all([h.other.apply([{ key: a, add: 3 }], BASE), h.store.apply([{ key: a, add: 4 }], BASE)])
    expect(await h.store.read([a, b, key()], BASE - 1)).toEqual([9, 1, 0])
    expect(await h.other.read([b, a], BASE - 1)).toEqual([1, 9])
  })

  it('max keeps the highest value written by any instance (a latest instant), whatever the order', async () => {
    const k = key()
    await h.store.apply([{ key: k, max: 1_700_000_000_500 }], BASE)
    await h.other.apply([{ key: k, max: 1_700_000_000_100 }], BASE)
    expect(await h.store.read([k], BASE - 1)).toEqual([1_700_000_000_500])
    await h.other.apply([{ key: k, max: 1_700_000_000_900 }], BASE)
    expect(await h.store.read([k], BASE - 1)).toEqual([1_700_000_000_900])
  })

  it('an expired counter reads 0', async () => {
    const k = key()
    await h.store.apply([{ key: k, add: 5 }], BASE - 60_000)
    expect(await h.other.read([k], BASE - 60_001)).toEqual([5])
    expect(await h.other.read([k], BASE - 60_000)).toEqual([0])
  })
}
