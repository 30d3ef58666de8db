import { getPublicSuffix } from 'tldts'

/**
 * Public suffixes per the Public Suffix List (https://publicsuffix.org), through `tldts`, which
 * ships the list compiled in (no network at run time; `npm update tldts` brings a newer list).
 *
 * The private section counts too (`allowPrivateDomains`): `github.io`, `appspot.com`,
 * `blogspot.com`, `s3.amazonaws.com` are suffixes under which unrelated parties hold names, so
 * authorizing one would let a tenant's links point at anybody's site there. A tenant's own
 * name under such a suffix (`acme.github.io`) is an ordinary registrable domain.
 */
export function isPublicSuffix(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '')
  if (h === '') return false
  return getPublicSuffix(h, { allowPrivateDomains: true }) === h
}
