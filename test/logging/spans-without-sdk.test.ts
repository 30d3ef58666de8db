import { describe, expect, it } from 'vitest'
import { activeTraceId, inMessageSpan, inTaskSpan } from '@lsv/shared/logging/trace-propagation.ts'

/**
 * Without the trace SDK (platform/telemetry.ts not started: the local stack, tests that build an
 * app in process) a task or message handler runs as it is, with no span made for nothing
 * (docs/performance.md, "Eleventh pass"). With the SDK: telemetry.test.ts.
 */
describe('task and message spans without the SDK', () => {
  it('run the handler as it is: its own promise is the answer, in no trace', async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    // through the API's no-op tracer the answer was another promise, the span callback's
    const handled = Promise.resolve('handled')
    expect(inTaskSpan('webhooks', parent, () => handled)).toBe(handled)
    expect(inMessageSpan('contact-batches', { id: 'm-1', attributes: { traceparent: parent } }, () => handled)).toBe(handled)
    expect(await inTaskSpan('webhooks', parent, async () => ({ ran: true, trace: activeTraceId() }))).toEqual({ ran: true, trace: null })
  })

  it("hand on the handler's failure as a rejection, a synchronous throw too", async () => {
    const failing = inTaskSpan('webhooks', null, async () => {
      throw new Error('store unavailable')
    })
    await expect(failing).rejects.toThrow('store unavailable')
    const throwing = (() => {
      throw new Error('thrown at once')
    }) as unknown as () => Promise<never>
    const answer = inTaskSpan('webhooks', null, throwing)
    expect(answer).toBeInstanceOf(Promise)
    await expect(answer).rejects.toThrow('thrown at once')
  })
})
