import { ERROR_CODES, type ErrorCode } from './codes.ts'

/** One validation issue, as listed in `issues` of a 400 `invalid payload` (link minting, management API). */
export interface ValidationIssue {
  code: string
  message: string
  path: string
}

export interface AppErrorOptions {
  /** Response headers to send with the error (for example `retry-after`). */
  headers?: Record<string, string>
  /** Validation issues; only sent where the operation declares `issues`. */
  issues?: ValidationIssue[]
  /** The underlying cause, logged, never sent to the client. */
  cause?: unknown
}

/**
 * A failure with a known code. Route handlers and domain functions throw it; the HTTP error
 * handler turns it into the `{ok:false, error}` envelope with the code's status and text.
 */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Record<string, string>
  readonly issues: ValidationIssue[] | undefined

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(ERROR_CODES[code].message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_CODES[code].status
    this.headers = options.headers ?? {}
    this.issues = options.issues
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError
}
