import { expect, it } from 'vitest'
import { nextSlice } from '@lsv/shared/lib/slices.ts'

const busy = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    /* a synchronous slice of work, as a 500-document transaction */
  }
}

/**
 * Issue 16, item 9: with `setImmediate` between slices, every waiting job resumed in the same
 * check phase (four batches: four slices back to back before sockets were polled again).
 */
it('lets the event loop turn between any two slices, however many jobs are waiting', async () => {
  const events: string[] = []
  const ticker = setInterval(() => events.push('turn'), 0)
  await Promise.all(
    [0, 1, 2, 3].map(async (job) => {
      for (let slice = 0; slice < 5; slice++) {
        await nextSlice()
        busy(3)
        events.push(`job${job}`)
      }
    }),
  )
  clearInterval(ticker)
  const slices = events.filter((e) => e !== 'turn')
  expect(slices).toHaveLength(20)
  const backToBack = events.slice(1).filter((e, i) => e !== 'turn' && events[i] !== 'turn')
  expect(backToBack).toEqual([])
  // in arrival order: the jobs take turns
  expect(slices.slice(0, 8)).toEqual(['job0', 'job1', 'job2', 'job3', 'job0', 'job1', 'job2', 'job3'])
})
