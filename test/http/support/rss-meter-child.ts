/**
 * The memory side of a child process that a test measures (services-child.ts,
 * preauth-edge-child.ts): RSS sampled every few ms, and the parent's messages answered — `mark`
 * (gc, then a new baseline), `report` (the baseline and the peak since, plus what `extra` adds)
 * and `close` (stop sampling, then `close` the child's own apps and deps).
 */
const SAMPLE_MS = 5

export function serveRssMeter(options: { extra?: () => Record<string, unknown>; close: () => Promise<void> }): (message: unknown) => void {
  let baseline = process.memoryUsage().rss
  let rssPeak = baseline
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  }, SAMPLE_MS)
  const send = (message: unknown) => process.send!(message)
  process.on('message', async (message: { type: string }) => {
    if (message.type === 'mark') {
      ;(globalThis as { gc?: () => void }).gc?.()
      baseline = process.memoryUsage().rss
      rssPeak = baseline
      send({ type: 'marked', baseline })
    } else if (message.type === 'report') {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
      send({ type: 'report', baseline, rssPeak, ...options.extra?.() })
    } else if (message.type === 'close') {
      clearInterval(sampler)
      await options.close()
      process.disconnect()
    }
  })
  return send
}
