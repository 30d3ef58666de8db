import type { MonotonicTimer } from '@lsv/shared/adapters/tenant-write-settle.ts'

/** A monotonic clock that moves only when something sleeps on it: a write's wait then takes no real time. */
export function fakeMonotonic(): MonotonicTimer {
  let t = 0
  return {
    now: () => t,
    sleep: async (ms) => {
      t += ms
    },
  }
}
