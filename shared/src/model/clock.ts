/** Time source. Production uses the system clock; tests pass a controllable one. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: number
  constructor(start: number | Date = Date.UTC(2026, 8, 4, 12, 0, 0)) {
    this.#now = typeof start === 'number' ? start : start.getTime()
  }
  now(): number {
    return this.#now
  }
  set(ms: number | Date): void {
    this.#now = typeof ms === 'number' ? ms : ms.getTime()
  }
  advance(ms: number): void {
    this.#now += ms
  }
}

export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString()
}
