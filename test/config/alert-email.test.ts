import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '@lsv/shared/config/config.ts'

/**
 * ALERT_EMAIL (the tenants' endpoint alert emails; docs/deploy.md, "Alert emails"): a folder of
 * files outside production, refused in production unless LOCAL_WIRING; with smtp, a sender and a
 * relay that is not Terraform's placeholder (infra/secrets.tf).
 */
const production = {
  NODE_ENV: 'production',
  GOOGLE_CLOUD_PROJECT: 'lsv-prod',
  STORE_BACKEND: 'firestore',
  QUEUE_BACKEND: 'pubsub',
  SECRETS_BACKEND: 'secretmanager',
  TASKS_BACKEND: 'cloudtasks',
  DISPATCHER_URL: 'https://webhook-dispatcher-123456.europe-west1.run.app',
  TASKS_SERVICE_ACCOUNT: 'tasks-invoker@lsv-prod.iam.gserviceaccount.com',
  PORTAL_BASE_URL: 'https://portal.example.com',
  EDGE_BASE_URL_TEMPLATE: 'https://{public_id}.edge.example.com',
  KEY_PEPPER: 'p',
  OPERATOR_TOKEN: 'o',
}
const RELAY = 'smtps://apikey:key@smtp.sendgrid.net:465'

const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env, 'portal-api')
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as Error).message
  }
  throw new Error('loadConfig accepted it')
}

describe('ALERT_EMAIL', () => {
  it('outside production: files in DATA_DIR/alert-mail by default, or the folder named', () => {
    const local = loadConfig({ NODE_ENV: 'development', DATA_DIR: '/tmp/lsv-x' })
    expect([local.alertEmail, local.alertMailDir, local.alertEmailFrom]).toEqual(['file', '/tmp/lsv-x/alert-mail', 'alerts@localhost'])
    expect(loadConfig({ NODE_ENV: 'test', ALERT_MAIL_DIR: '/tmp/mails' }).alertMailDir).toBe('/tmp/mails')
  })

  it('in production: off by default; the file sink refused (admitted with LOCAL_WIRING); smtp with a sender and a relay', () => {
    expect(loadConfig(production, 'portal-api').alertEmail).toBe('off')
    expect(refusal({ ...production, ALERT_EMAIL: 'file' })).toMatch(/^configuration error: ALERT_EMAIL must not be file in production/)
    expect(loadConfig({ ...production, ALERT_EMAIL: 'file', LOCAL_WIRING: 'true' }, 'portal-api').alertEmail).toBe('file')
    expect(refusal({ ...production, ALERT_EMAIL: 'smtp', ALERT_EMAIL_FROM: 'alerts@example.com' })).toMatch(
      /^configuration error: ALERT_SMTP_URL is required with ALERT_EMAIL=smtp/,
    )
    expect(refusal({ ...production, ALERT_EMAIL: 'smtp', ALERT_SMTP_URL: RELAY })).toMatch(/^configuration error: ALERT_EMAIL_FROM is required in production/)
    const on = loadConfig({ ...production, ALERT_EMAIL: 'smtp', ALERT_SMTP_URL: RELAY, ALERT_EMAIL_FROM: 'alerts@example.com' }, 'portal-api')
    expect([on.alertEmail, on.alertSmtpUrl]).toEqual(['smtp', RELAY])
  })

  it("refuses Terraform's placeholder relay with smtp, and accepts it while email is off", () => {
    const placeholder = 'smtp://unset.invalid:587'
    expect(refusal({ ...production, ALERT_EMAIL: 'smtp', ALERT_SMTP_URL: placeholder, ALERT_EMAIL_FROM: 'alerts@example.com' })).toMatch(
      /placeholder infra\/ wrote/,
    )
    expect(loadConfig({ ...production, ALERT_SMTP_URL: placeholder }, 'portal-api').alertEmail).toBe('off')
    // not an SMTP URL at all: the schema's form
    expect(refusal({ ...production, ALERT_SMTP_URL: 'https://relay.example.com' })).toMatch(
      /^configuration error: ALERT_SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/,
    )
  })
})
