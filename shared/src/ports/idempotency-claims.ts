/**
 * "This key was handled": lets a redelivered visit event or task be handled once, whichever
 * instance sees it again. Claims expire (the key may be handled again after `ttlSeconds`).
 */
export interface IdempotencyClaims {
  /**
   * Records that an idempotency key was processed; true the first time, false afterwards (until
   * the claim expires). `nowMs` (default: the wall clock) is the instant of the claim, so tests and
   * injected clocks control expiry.
   */
  claimOnce(key: string, ttlSeconds: number, nowMs?: number): Promise<boolean>
  close(): Promise<void>
}
