/**
 * The gRPC status codes the Google clients reject with (`err.code`), and what the adapters make of
 * them. One definition for every Google adapter (Firestore, Pub/Sub, Cloud Tasks, Secret Manager).
 */
export const NOT_FOUND = 5
export const ALREADY_EXISTS = 6
const FAILED_PRECONDITION = 9

/**
 * Codes that are an answer of the service itself (it was reached and said no), as opposed to a
 * transport failure (UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN) or a failed credential
 * (UNAUTHENTICATED): INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, UNIMPLEMENTED.
 */
export function isServiceAnswer(err: unknown): boolean {
  const code = codeOf(err)
  return code === 3 || code === NOT_FOUND || code === 7 || code === 12
}

/** the gRPC code of a client error, undefined for anything else */
export function codeOf(err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code
}

export function isAlreadyExists(err: unknown): boolean {
  return codeOf(err) === ALREADY_EXISTS
}

/**
 * A lost race on a document written with a precondition: `create()` of one that exists, an update
 * whose `lastUpdateTime` moved, an update of one deleted meanwhile. Retry after re-reading.
 */
export function isConflict(err: unknown): boolean {
  const code = codeOf(err)
  return code === ALREADY_EXISTS || code === FAILED_PRECONDITION || code === NOT_FOUND
}

/** full jitter: a random wait in [0, min(capMs, baseMs * 2^attempt)) before a retry */
export function backoff(attempt: number, baseMs: number, capMs: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(capMs, baseMs * 2 ** attempt)))
}
