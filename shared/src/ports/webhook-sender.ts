/** What one POST of a delivery to a receiver came to. */
export interface SendResult {
  statusCode: number | null
  /** transport failure (refused address, timeout, reset…); null when an answer arrived */
  error: string | null
  latencyMs: number
  /** at most the first 1 KiB of the response body, as text */
  excerpt: string | null
  retryAfter: string | undefined
  /** the answer's headers, bounded and redacted (absent from senders that do not keep them) */
  headers?: Record<string, string>
}

/**
 * Sends signed webhook bodies to receivers: one POST of the exact bytes, no redirect followed,
 * bounded in time and in what is read back, and never to a denied address (checked when the
 * connection is made, whatever DNS answers).
 */
export interface WebhookSender {
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<SendResult>
}
