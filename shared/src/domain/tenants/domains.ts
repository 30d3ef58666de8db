import { AppError, type ValidationIssue } from '../../errors/app-error.ts'
import { hostOfDomainEntry } from '../links/destination.ts'
import { isPublicSuffix } from '../links/public-suffix.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'

/** Why an entry cannot be stored, as the `message` of its issue (docs/management-api.md). */
const NOT_A_DOMAIN = 'must be a domain name with at least two labels (no scheme, port, path, wildcard or IP address)'
export const PUBLIC_SUFFIX =
  'is a public suffix (Public Suffix List, private section included): it would authorize every site under it; name your own domain, such as example.co.uk'

/**
 * One authorized domain as stored: lower-case, no trailing dot, IDN as punycode (what WHATWG
 * makes of `http://<domain>`). Refused: anything that is not a domain name (empty, a URL, an IP
 * literal, a port, a single label such as `com`) and public suffixes (`co.uk`, `github.io`),
 * each of which would authorize sites of unrelated owners. The normalization is the one the link
 * destination check applies, so what is stored is what matches.
 */
function normalizeDomain(raw: string): { ok: true; domain: string } | { ok: false; code: 'domain' | 'public_suffix'; message: string } {
  const notADomain = { ok: false, code: 'domain', message: NOT_A_DOMAIN } as const
  if (/^\*\./.test(raw.trim())) return notADomain // a domain already covers its subdomains: no wildcards
  const d = hostOfDomainEntry(raw)
  // WHATWG lets through empty labels (`a..com`) and labels DNS cannot hold (`-a.com`, 64+ characters)
  if (d === null || d.length > 253 || !d.split('.').every((label) => LABEL.test(label))) return notADomain
  if (isPublicSuffix(d)) return { ok: false, code: 'public_suffix', message: PUBLIC_SUFFIX }
  return { ok: true, domain: d }
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/

/**
 * `PUT /api/v1/admin/accounts/{accountId}/authorized-domains`: replaces the list. Every entry
 * must normalize, else 400 `invalid payload` with one issue per refused entry (`path`
 * `/domains/<i>`, `code` `domain` or `public_suffix`) and nothing is stored; duplicates (after
 * normalization) are kept once, in first-seen order.
 */
export async function setAuthorizedDomains(deps: TenantDeps, accountId: string, domains: readonly string[]): Promise<{ domains: string[] }> {
  await requireAccount(deps, accountId)
  const issues: ValidationIssue[] = []
  const out: string[] = []
  domains.forEach((raw, i) => {
    const d = normalizeDomain(raw)
    if (!d.ok) issues.push(issue(`/domains/${i}`, d.code, d.message))
    else if (!out.includes(d.domain)) out.push(d.domain)
  })
  if (issues.length > 0) throw invalidPayload(...issues)
  const updated = await deps.tenants.updateAccount(accountId, { authorized_domains: out, updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  return { domains: [...updated.authorized_domains] }
}

export async function getAuthorizedDomains(deps: TenantDeps, accountId: string): Promise<{ domains: string[] }> {
  return { domains: [...(await requireAccount(deps, accountId)).authorized_domains] }
}
