import { AppError, type ValidationIssue } from '../../errors/app-error.ts'
import { normalizeAuthorizedDomain } from '../links/destination.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'

/**
 * One authorized domain as stored: lower-case, no trailing dot, IDN as punycode (what WHATWG
 * makes of `http://<domain>`), or null when it cannot be a domain: empty, a URL, an IP literal,
 * a port, or a single label such as `com` (which would authorize everything under it). The
 * normalization is the one the link destination check applies, so what is stored is what matches.
 */
export function normalizeDomain(raw: string): string | null {
  if (/^\*\./.test(raw.trim())) return null // a domain already covers its subdomains: no wildcards
  const d = normalizeAuthorizedDomain(raw)
  // WHATWG lets through empty labels (`a..com`) and labels DNS cannot hold (`-a.com`, 64+ characters)
  if (d === null || d.length > 253 || !d.split('.').every((label) => LABEL.test(label))) return null
  return d
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/

/**
 * `PUT /api/v1/admin/accounts/{accountId}/authorized-domains`: replaces the list. Every entry
 * must normalize; duplicates (after normalization) are kept once, in first-seen order.
 */
export async function setAuthorizedDomains(deps: TenantDeps, accountId: string, domains: readonly string[]): Promise<{ domains: string[] }> {
  await requireAccount(deps, accountId)
  const issues: ValidationIssue[] = []
  const out: string[] = []
  domains.forEach((raw, i) => {
    const d = normalizeDomain(raw)
    if (d === null) issues.push(issue(`/domains/${i}`, 'domain', 'must be a domain name with at least two labels (no scheme, port, path, wildcard or IP address)'))
    else if (!out.includes(d)) out.push(d)
  })
  if (issues.length > 0) throw invalidPayload(...issues)
  const updated = await deps.tenants.updateAccount(accountId, { authorized_domains: out, updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  return { domains: [...updated.authorized_domains] }
}

export async function getAuthorizedDomains(deps: TenantDeps, accountId: string): Promise<{ domains: string[] }> {
  return { domains: [...(await requireAccount(deps, accountId)).authorized_domains] }
}
