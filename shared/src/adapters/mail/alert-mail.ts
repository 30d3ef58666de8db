import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { PlatformConfig } from '../../config/config.ts'
import type { AlertMail, AlertMessage } from '../../ports/alert-mail.ts'
import { isLoopbackHost } from '../../config/loopback.ts'

/**
 * A relay that does not answer must not hold a delivery task for long (the dispatcher's tasks
 * wait for their listeners): nodemailer's own timeouts, well under Cloud Run's request timeout.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 }

/**
 * nodemailer's SMTP options from the relay's URL: with a `url` option nodemailer would read the
 * URL alone and drop the timeouts. `smtps:` is TLS from the start (465); `smtp:` must upgrade with
 * STARTTLS before the credentials are sent, except to a relay on this machine.
 */
function smtpOptions(raw: string) {
  const u = new URL(raw)
  const secure = u.protocol.toLowerCase() === 'smtps:'
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    requireTLS: !secure && !isLoopbackHost(u.hostname),
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
    ...SMTP_TIMEOUTS,
  }
}

type Transport = { sendMail(mail: object): Promise<{ message?: unknown }>; close(): void }

/** Control characters out of a header value (a tenant's endpoint name is part of the subject). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const headerText = (value: string): string => value.replace(/[\u0000-\u001f\u007f]+/g, ' ')

/** A file name a message can have: its time and alert id, nothing else. */
const fileNameOf = (at: Date, alertId: string): string => `${at.toISOString().replace(/[:.]/g, '-')}-${alertId.replace(/[^A-Za-z0-9_-]/g, '_')}.eml`

/**
 * The alert mail of the configuration (ALERT_EMAIL), built with nodemailer, which is imported only
 * when the first message is sent (a service that never sends one never loads it):
 * - `file`: nodemailer's stream transport renders the RFC 5322 message, written as one `.eml`
 *   file per message into ALERT_MAIL_DIR (renamed into place, so a reader never sees half of one);
 * - `smtp`: nodemailer's SMTP transport to ALERT_SMTP_URL (in Cloud Run, the secret `alert-smtp-url`);
 * - `off`: nothing is sent.
 */
export function createAlertMail(config: PlatformConfig, deps: { logger: Logger }): AlertMail {
  if (config.alertEmail === 'off') return { enabled: false, send: async () => {}, close: async () => {} }
  let transport: Promise<Transport> | null = null
  const open = async (): Promise<Transport> => {
    const nodemailer = (await import('nodemailer')).default
    if (config.alertEmail === 'file') return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }) as Transport
    // loadConfig refuses `smtp` without it
    if (!config.alertSmtpUrl) throw new Error('ALERT_EMAIL=smtp without ALERT_SMTP_URL')
    return nodemailer.createTransport(smtpOptions(config.alertSmtpUrl)) as Transport
  }
  const transportOf = (): Promise<Transport> => {
    if (!transport) {
      transport = open()
      // a transport that could not be opened is opened again for the next message
      transport.catch(() => {
        transport = null
      })
    }
    return transport
  }
  return {
    enabled: true,
    async send(message: AlertMessage) {
      const t = await transportOf()
      const info = await t.sendMail({
        from: config.alertEmailFrom,
        to: message.to,
        subject: headerText(message.subject),
        text: message.text,
        headers: { 'X-Alert-Id': message.alertId },
      })
      if (config.alertEmail !== 'file') return
      const at = new Date()
      await mkdir(config.alertMailDir, { recursive: true })
      const file = join(config.alertMailDir, fileNameOf(at, message.alertId))
      await writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 })
      await rename(`${file}.tmp`, file)
      deps.logger.info({ event: 'alert_mail_written', file, alertId: message.alertId }, 'alert email written to the local mail folder')
    },
    async close() {
      const t = transport
      transport = null
      if (t) (await t.catch(() => null))?.close()
    },
  }
}
