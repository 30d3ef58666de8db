import { describe, expect, it, vi } from 'vitest'
import { trace } from '@opentelemetry/api'
import { activeTraceId, inMessageSpan, inTaskSpan } from '@lsv/shared/logging/trace-propagation.ts'

/**
 * Without the trace SDK (platform/telemetry.ts not started: the local stack, tests that build an
 * app in process) a task or message handler runs as it is, with no span made for nothing
 * (docs/performance.md, "Eleventh pass"). With the SDK: telemetry.test.ts.
 */
describe('task and message spans without the SDK', () => {
  it('run the handler and answer its result, asking no tracer for a span', async () => {
    const getTracer = vi.spyOn(trace, 'getTracer')
    try {
      const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
      expect(await inTaskSpan('webhooks', parent, async () => ({ ran: true, trace: activeTraceId() }))).toEqual({ ran: true, trace: null })
      expect(await inMessageSpan('contact-batches', { id: 'm-1', attributes: { traceparent: parent } }, async () => 'handled')).toBe('handled')
      expect(getTracer).not.toHaveBeenCalled()
    } finally {
      getTracer.mockRestore()
    }
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
