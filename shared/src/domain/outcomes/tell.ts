import type { ListenerContext } from '../../ports/listeners.ts'

/**
 * Tells each listener of a list, in order. A listener that throws (or rejects) is logged and the
 * next one is told: what the outcome reports is already done (an attempt recorded, an answer
 * sent), so no listener can undo or fail it. Each listener's own failure contract says what is
 * lost then (ports/listeners.ts).
 */
export async function tellListeners<L extends { readonly name: string }>(
  listeners: readonly L[],
  ctx: ListenerContext,
  tell: (listener: L) => void | Promise<void>,
): Promise<void> {
  for (const listener of listeners) {
    try {
      await tell(listener)
    } catch (err) {
      ctx.logger.error({ err, listener: listener.name }, 'listener failed')
    }
  }
}

/** tellListeners for listeners that never await (a push's, told after its answer is sent). */
export function tellListenersNow<L extends { readonly name: string }>(listeners: readonly L[], ctx: ListenerContext, tell: (listener: L) => void): void {
  for (const listener of listeners) {
    try {
      tell(listener)
    } catch (err) {
      ctx.logger.error({ err, listener: listener.name }, 'listener failed')
    }
  }
}
