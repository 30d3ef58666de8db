/**
 * The modules `npm run test:mutation` mutates (StrykerJS, stryker.config.mjs), each with the files
 * Stryker mutates and only the test files that exercise them, so a run does not load the whole
 * suite (globs: `*` and `**` only, or one file with a mutation range).
 */
import { readFileSync } from 'node:fs'

/**
 * `file:line:col-line:col` (Stryker's mutation range: lines from 1, columns from 0) of the value
 * of `bodyLimit:` in an app file, so only the body cap of that line is mutated (the rest of the
 * file, readiness wiring and route registration, is not a body limit).
 */
function bodyLimitValue(file: string): string {
  const lines = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8').split('\n')
  for (const [i, line] of lines.entries()) {
    const m = /bodyLimit: ([^,}]+)/.exec(line)
    if (m) {
      const start = m.index + 'bodyLimit: '.length
      return `${file}:${i + 1}:${start}-${i + 1}:${start + m[1]!.trimEnd().length}`
    }
  }
  throw new Error(`no bodyLimit in ${file}`)
}

export interface MutationModule {
  mutate: string[]
  tests: string[]
}

export const MUTATION_MODULES: Record<string, MutationModule> = {
  // keys, tokens, operator token, hashing and constant-time comparison
  auth: {
    mutate: ['shared/src/domain/auth/**/*.ts', 'shared/src/domain/ingest/auth.ts'],
    tests: [
      'test/auth/api-keys.test.ts',
      'test/auth/credential-parsing.test.ts',
      'test/deactivation/*.test.ts',
      'test/management/operator-token.test.ts',
      'test/management/provisioning.test.ts',
      // (not edge-contacts.test.ts: its 8 MiB and 10,000-record pushes would run for every key mutant;
      // deactivation.test.ts and api-keys.test.ts cover the key check on the edge)
      'test/ingest/edge-source.test.ts',
      'test/ingest/edge-partnercrm.test.ts',
    ],
  },
  // field precedence (form > manual > enrichment > provider) and the FieldPolicy accounting
  merge: {
    mutate: ['shared/src/domain/contacts/merge.ts', 'shared/src/domain/contacts/field-policy.ts'],
    tests: [
      'test/contacts/merge.test.ts',
      'test/contacts/merge-fields.test.ts',
      'test/contacts/field-policy.test.ts',
      'test/outbound/assemble.test.ts',
      'test/outbound/visit.test.ts',
    ],
  },
  // outbound webhooks: SSRF policy (static check, address ranges, connect-time filter) and signing
  ssrf: {
    mutate: [
      'shared/src/domain/webhooks/ssrf.ts',
      'shared/src/adapters/outbound-http/safe-agent.ts',
      'shared/src/lib/ip-ranges.ts',
      'shared/src/domain/webhooks/signing.ts',
    ],
    tests: [
      'test/outbound/ssrf.test.ts',
      'test/outbound/ssrf-dns.test.ts',
      'test/outbound/ssrf-exact.test.ts',
      'test/outbound/signing.test.ts',
      'test/outbound/signing-vectors.test.ts',
    ],
  },
  // fixed windows, the exhaustion memo and the push quota (contract section 8)
  'rate-limit': {
    mutate: ['shared/src/adapters/rate-limit-windows.ts', 'shared/src/domain/ingest/rate-limit.ts'],
    tests: ['test/conformance/rate-limiter.test.ts', 'test/conformance/rate-limit-windows.test.ts', 'test/ingest/rate-limit.test.ts'],
  },
  // push bodies: the 8 MiB cap (the apps' bodyLimit), safe JSON parsing, record count and depth
  'body-limits': {
    mutate: [
      'shared/src/http/json-body.ts',
      'shared/src/domain/ingest/push-body.ts',
      bodyLimitValue('services/edge-ingest/src/app.ts'),
      bodyLimitValue('services/portal-api/src/app.ts'),
    ],
    tests: ['test/ingest/hostile.test.ts', 'test/ingest/body-limits.test.ts', 'test/ingest/mapping.test.ts'],
  },
  // revocation through the tenant lookup cache: an answer from memory only while its version is
  // confirmed within the bound (the embedded version source; the Firestore one needs the emulator,
  // which mutation runs do not start)
  revocation: {
    mutate: ['shared/src/adapters/tenant-lookup-cache.ts', 'shared/src/adapters/embedded/tenant-config-version.ts'],
    tests: [
      'test/conformance/tenant-lookup-cache.test.ts',
      'test/conformance/tenant-config-version.test.ts',
      'test/embedded/tenant-config-version.test.ts',
      'test/deactivation/revocation-bound.test.ts',
    ],
  },
}
