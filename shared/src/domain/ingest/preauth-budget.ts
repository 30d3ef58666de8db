import { Transform, type TransformCallback } from 'node:stream'
import { AppError } from '../../errors/app-error.ts'

/**
 * The partner CRM webhook (contract 4.5) names its location in the body, so a call whose token
 * could not be identified beforehand (no token, or one that matches no location of the account:
 * domain/ingest/auth.ts `identifyPartnerCrmToken`) must be read before it can be authenticated.
 * What such callers can make one instance hold is bounded here: bytes of bodies being buffered
 * before authentication, per instance and per account (a semaphore of bytes).
 *
 * A body with a declared length reserves it before a byte is read; a chunked body reserves each
 * chunk as it arrives. When the reservation does not fit, the answer is at once 503 `temporarily
 * unavailable` with `Retry-After` (contract 4.5 lists 503 as "retry is safe"; its 429 is the
 * per-location request rate of section 8, whose Retry-After rules do not fit a busy instance),
 * and nothing of that body is kept (the HTTP layer drains it: http/lingering-close.ts).
 * Reservations are released when the answer has been sent (the body is no longer referenced).
 *
 * A caller whose token identified its location before the body is authenticated and never
 * waits on this budget: anonymous traffic cannot crowd out a real sender that presents its token.
 *
 * Fair across accounts (issue 21, item 2). Public ids are public, so a few slow bodies aimed at
 * four accounts could hold the whole instance budget, and every other account's token-less
 * pushes got 503. Now the last `reserveBytes` of the instance budget are only for an account
 * whose own reservations stay within `guaranteedBytes`: traffic aimed at some accounts can hold
 * at most `instanceBytes - reserveBytes`, and any other account's real pushes (a few KiB) still
 * fit. To crowd the reserve out too, anonymous traffic must be aimed at
 * `reserveBytes / guaranteedBytes` accounts at once (64 with the production limits).
 *
 * What a body held here costs is its bytes, not more: such a body is not parsed before its
 * location is checked (location-scan.ts; parsing costs about 14 times the bytes).
 *
 * Not held by one socket (issue 31). One anonymous socket declaring 8 MiB to an account and then
 * sending nothing held the account's whole budget, and every token-less push of that account got
 * 503 until the request timeout (120 s), renewably. Two rules end that:
 * - a real sender keeps a lane: the last `accountReserveBytes` of an account's bytes are only for
 *   a body of at most `guaranteedBytes`, so one large body (whose own bytes are the 8 MiB cap at
 *   most) cannot take the account's whole budget, and its small pushes (a few KiB) still fit;
 * - a held body must keep arriving: in each window of `rateWindowMs` (the first is the grace) at
 *   least `minBytesPerSecond` must arrive, or the call is answered 408 `request timeout` at once
 *   and its bytes given back (meteredBody). A real 8 MiB body at that rate takes under 9 minutes;
 *   a sender that stalls gives its bytes back within two windows.
 */
export interface PreAuthLimits {
  /** bytes of unauthenticated bodies one instance buffers at once (all accounts) */
  instanceBytes: number
  /** of those, bytes for one account (at least the 8 MiB cap, so one full-size body fits) */
  accountBytes: number
  /** Retry-After of the 503 */
  retryAfterSeconds: number
  /** the last bytes of instanceBytes, only for accounts holding at most guaranteedBytes (default 0) */
  reserveBytes?: number
  /**
   * what one account may hold and still draw on the reserve, and what one body may hold and still
   * draw on its account's lane (default 0)
   */
  guaranteedBytes?: number
  /** the last bytes of accountBytes, only for a body of at most guaranteedBytes: a real sender's lane (default 0) */
  accountReserveBytes?: number
  /** a held body must arrive at least this fast, measured per rateWindowMs (default: no minimum) */
  minBytesPerSecond?: number
  /** the window of minBytesPerSecond; the first window after the body starts is its grace (default 5 s) */
  rateWindowMs?: number
}

/**
 * 32 MiB per instance of an instance's 1 GiB (infra/cloud-run.tf); bodies are held as bytes,
 * twice at most while the last chunk is joined. Real partner CRM contact bodies are a few KiB:
 * 4 MiB of reserve is room for 64 accounts' 64 KiB at once. Per account, 8 MiB (one full-size
 * body) plus a lane of 512 KiB (eight 64 KiB bodies) that one large body cannot take. 16 KiB/s
 * is a fraction of any server's uplink: the 8 MiB cap within the 120 s request timeout is 70 KiB/s.
 */
export const PRE_AUTH_LIMITS: PreAuthLimits = {
  instanceBytes: 32 * 1024 * 1024,
  accountBytes: 8 * 1024 * 1024 + 512 * 1024,
  retryAfterSeconds: 5,
  reserveBytes: 4 * 1024 * 1024,
  guaranteedBytes: 64 * 1024,
  accountReserveBytes: 512 * 1024,
  minBytesPerSecond: 16 * 1024,
  rateWindowMs: 5_000,
}

const DEFAULT_RATE_WINDOW_MS = 5_000

export interface BudgetLease {
  /** reserves `bytes` more; false (nothing reserved) when it does not fit */
  take(bytes: number): boolean
  /** gives back everything this lease reserved (idempotent) */
  release(): void
}

export class PreAuthBudget {
  readonly limits: PreAuthLimits
  #inUse = 0
  #perAccount = new Map<string, number>()
  #peak = 0

  constructor(limits: PreAuthLimits = PRE_AUTH_LIMITS) {
    this.limits = limits
  }

  /** bytes reserved right now (all accounts) */
  get inUse(): number {
    return this.#inUse
  }

  /** the most ever reserved at once (what the bound is checked against) */
  get peak(): number {
    return this.#peak
  }

  accountInUse(accountId: string): number {
    return this.#perAccount.get(accountId) ?? 0
  }

  lease(accountId: string): BudgetLease {
    let held = 0
    let released = false
    return {
      take: (bytes) => {
        if (released || bytes < 0) return false
        const account = this.accountInUse(accountId)
        // the account's lane is for small bodies: a large one stops short of it
        const smallBody = held + bytes <= (this.limits.guaranteedBytes ?? 0)
        if (account + bytes > this.limits.accountBytes - (smallBody ? 0 : (this.limits.accountReserveBytes ?? 0))) return false
        // the reserve is for accounts that hold little: a busy account stops short of it
        const withinGuarantee = account + bytes <= (this.limits.guaranteedBytes ?? 0)
        const ceiling = this.limits.instanceBytes - (withinGuarantee ? 0 : (this.limits.reserveBytes ?? 0))
        if (this.#inUse + bytes > ceiling) return false
        this.#inUse += bytes
        this.#perAccount.set(accountId, account + bytes)
        this.#peak = Math.max(this.#peak, this.#inUse)
        held += bytes
        return true
      },
      release: () => {
        if (released) return
        released = true
        this.#inUse -= held
        const left = this.accountInUse(accountId) - held
        if (left > 0) this.#perAccount.set(accountId, left)
        else this.#perAccount.delete(accountId)
        held = 0
      },
    }
  }

  /** the answer when a reservation does not fit */
  busy(): AppError {
    return new AppError('temporarily_unavailable', { headers: { 'retry-after': String(this.limits.retryAfterSeconds) } })
  }
}

/**
 * The held body as it arrives: a pass-through stream that reserves every chunk before passing
 * it on (a body without a declared length; one with a declared length reserved it whole, pass
 * `reserved`), and that ends the call with 408 `request timeout`, its bytes given back at once,
 * when a window passes with less than the budget's minimum rate arriving.
 */
export function meteredBody(budget: PreAuthBudget, lease: BudgetLease, reserved = false): Transform {
  const { minBytesPerSecond, rateWindowMs = DEFAULT_RATE_WINDOW_MS } = budget.limits
  let arrived = 0
  const stream = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (!reserved && !lease.take(chunk.length)) return callback(budget.busy())
      arrived += chunk.length
      callback(null, chunk)
    },
  })
  if (minBytesPerSecond !== undefined) {
    const perWindow = (minBytesPerSecond * rateWindowMs) / 1000
    const timer = setInterval(() => {
      if (arrived >= perWindow) {
        arrived = 0
        return
      }
      clearInterval(timer)
      lease.release()
      stream.destroy(new AppError('request_timeout'))
    }, rateWindowMs)
    timer.unref()
    stream.once('close', () => clearInterval(timer))
  }
  return stream
}
