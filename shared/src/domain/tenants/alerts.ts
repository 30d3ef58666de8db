import type { AccountRecord, AlertSettings } from '../../model/records.ts'
import type { ValidationIssue } from '../../errors/app-error.ts'
import { checkUrlStatically, MAX_DESTINATION_URL_LENGTH } from '../webhooks/ssrf.ts'
import { generateSigningSecret } from '../webhooks/signing.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'

/** RFC 5321's limit on a forward path */
const MAX_EMAIL_LENGTH = 254
/**
 * One address, `local@domain.tld`, with none of the characters that would let it name a second
 * recipient or a header (`,`, `;`, `<`, `>`, quotes, spaces, line breaks). Deliverability is the
 * relay's to judge; this only refuses what cannot be one plain address.
 */
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/

const NONE: AlertSettings = { email: null, webhook: null }

/** The account's alert settings; records written before alerts existed have none. */
export function alertsOf(account: Pick<AccountRecord, 'alerts'>): AlertSettings {
  return account.alerts ?? NONE
}

/** A value as stored, or the issue that refuses it. */
type Checked = { value: string | null } | { issue: ValidationIssue }

/** The address as stored (trimmed; '' is none). */
function checkedEmail(raw: string): Checked {
  const email = raw.trim()
  if (email === '') return { value: null }
  if (email.length > MAX_EMAIL_LENGTH) return { issue: issue('/email', 'length', `Keep the address to ${MAX_EMAIL_LENGTH} characters or fewer.`) }
  if (!EMAIL.test(email)) return { issue: issue('/email', 'email', 'Give one email address, such as ops@example.com.') }
  return { value: email }
}

/**
 * The URL as stored ('' is none), with the same destination rules as a webhook endpoint's
 * (domain/tenants/integrations.ts, webhooks/ssrf.ts): checked here without DNS, and again by
 * the delivery machinery on every send.
 */
function checkedUrl(deps: TenantDeps, raw: string): Checked {
  const url = raw.trim()
  if (url === '') return { value: null }
  if (url.length > MAX_DESTINATION_URL_LENGTH) return { issue: issue('/url', 'length', `Give a URL of at most ${MAX_DESTINATION_URL_LENGTH} characters.`) }
  const check = checkUrlStatically(url, deps.config.allowLoopbackWebhooks)
  if (!check.ok) return { issue: issue('/url', 'destination', `This URL cannot receive alerts: ${check.reason}.`) }
  return { value: new URL(url).href }
}

/**
 * Replaces the account's alert settings (the Settings screen's "Alerts" form). Both are
 * checked before anything is stored. A new or changed URL gets a new signing secret, returned
 * once here (the portal shows it once); the same URL keeps its secret.
 */
export async function setAlerts(
  deps: TenantDeps,
  accountId: string,
  raw: { email: string; url: string },
): Promise<{ alerts: AlertSettings; newSecret: string | null }> {
  const account = await requireAccount(deps, accountId)
  const checked = [checkedEmail(raw.email), checkedUrl(deps, raw.url)] as const
  const issues = checked.flatMap((c) => ('issue' in c ? [c.issue] : []))
  if (issues.length) throw invalidPayload(...issues)
  const [email, url] = checked.map((c) => ('value' in c ? c.value : null)) as [string | null, string | null]
  const current = alertsOf(account).webhook
  const now = nowIso(deps)
  const kept = url !== null && current?.url === url ? current : null
  const webhook = url === null ? null : (kept ?? { url, signing_secret: generateSigningSecret(), created_at: now })
  const alerts: AlertSettings = { email, webhook }
  await deps.tenants.updateAccount(accountId, { alerts, updated_at: now })
  return { alerts, newSecret: webhook && webhook !== kept ? webhook.signing_secret : null }
}
