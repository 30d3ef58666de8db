/** One alert email: plain text, to one address (domain/alerts/mail-text.ts writes it). */
export interface AlertMessage {
  to: string
  subject: string
  text: string
  /** the alert's id: the message's `X-Alert-Id` header, so a mailbox can tell a resend */
  alertId: string
}

/**
 * Where alert emails go (ALERT_EMAIL; adapters/mail/alert-mail.ts): a folder of `.eml` files
 * locally, an SMTP relay in Google Cloud, or nowhere. `send` resolves once the message is written
 * or the relay accepted it, and rejects when it could not be (the caller logs it).
 */
export interface AlertMail {
  /** false when ALERT_EMAIL=off: addresses are kept but nothing is sent (the portal says so) */
  readonly enabled: boolean
  send(message: AlertMessage): Promise<void>
  close(): Promise<void>
}
