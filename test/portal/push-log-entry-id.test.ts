import { describe, expect, it } from 'vitest'
import { pushLogEntryId } from '@lsv/shared/domain/activity/push-log.ts'

/**
 * The inbound debugger's entry ids (domain/activity/push-log.ts): the stores keep one entry per
 * id (a repeated id replaces an entry), and read them newest first by id. The random part is
 * drawn per process, not per entry, so uniqueness rests on the sequence: these walk the clock
 * forward, hold it still past the sequence's range, and step it back.
 */
const T0 = Date.UTC(2026, 10, 28, 21)

describe('pushLogEntryId', () => {
  it('sorts as the time does, and in call order within a millisecond', () => {
    const ids = [pushLogEntryId(T0), pushLogEntryId(T0), pushLogEntryId(T0 + 1), pushLogEntryId(T0 + 1_000), pushLogEntryId(T0 + 1_000)]
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0]!.startsWith(`${T0}-`)).toBe(true)
    expect(ids[0]).toMatch(/^\d{13}-[0-9a-f]{12}$/)
  })

  it('never repeats an id: 70,000 in one millisecond, then a clock that steps back over them', () => {
    const seen = new Set<string>()
    const at = T0 + 10_000
    for (let i = 0; i < 70_000; i++) seen.add(pushLogEntryId(at))
    // the clock steps back a second, then moves forward over the same milliseconds again
    for (let ms = at - 1_000; ms <= at; ms++) seen.add(pushLogEntryId(ms))
    for (let i = 0; i < 10; i++) seen.add(pushLogEntryId(at))
    expect(seen.size).toBe(70_000 + 1_001 + 10)
  })
})
