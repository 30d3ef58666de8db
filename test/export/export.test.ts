import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { runExport } from '../../scripts/cli/export.ts'
import { CONTACT_CHANGES_SCHEMA_FILE } from '@lsv/shared/contract/generated-files.ts'
import type { BigQueryField } from '@lsv/shared/domain/contacts/change-row.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { AccountRecord, ContactRecord, ContactUpsertInput } from '@lsv/shared/model/records.ts'
import type { MergeFn } from '@lsv/shared/ports/contact-store.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant, type TenantSpec } from '../helpers/tenant.ts'

/** Creates the record from the patch on first write: enough to seed contacts with every column. */
const seedMerge: MergeFn = (existing: ContactRecord | null, input: ContactUpsertInput, accountId: string) => {
  if (existing) return null
  const p = input.patch
  return {
    id: contactIdFor(accountId, input.source, input.external_id),
    account_id: accountId,
    source: input.source,
    external_id: input.external_id,
    subject_type: 'contact',
    identity: p.identity ?? {},
    company: p.company ?? {},
    location: p.location ?? {},
    business_email: p.business_email ?? null,
    emails: p.emails ?? [],
    phones: p.phones ?? [],
    traits: p.traits ?? [],
    custom_fields: p.custom_fields ?? {},
    name_source: 'manual',
    resolved_by: input.resolved_by ?? null,
    first_seen_at: input.at,
    last_seen_at: input.at,
    updated_at: input.at,
    versions: {},
  }
}

const SCHEMA = JSON.parse(readFileSync(CONTACT_CHANGES_SCHEMA_FILE, 'utf8')) as BigQueryField[]
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/

/** What `bq load` checks for NEWLINE_DELIMITED_JSON: known columns, types, modes. */
function schemaErrors(row: Record<string, unknown>, fields: BigQueryField[], path = ''): string[] {
  const errors: string[] = []
  const known = new Set(fields.map((f) => f.name))
  for (const key of Object.keys(row)) if (!known.has(key)) errors.push(`${path}${key}: not in the schema`)
  for (const f of fields) {
    const v = row[f.name]
    const at = `${path}${f.name}`
    if (f.mode === 'REPEATED') {
      if (!Array.isArray(v)) {
        errors.push(`${at}: not an array`)
        continue
      }
      for (const [i, item] of v.entries()) {
        if (f.type === 'RECORD') errors.push(...schemaErrors(item as Record<string, unknown>, f.fields!, `${at}[${i}].`))
      }
      continue
    }
    if (v === null || v === undefined) {
      if (f.mode === 'REQUIRED') errors.push(`${at}: required`)
      continue
    }
    if (f.type === 'STRING' && typeof v !== 'string') errors.push(`${at}: not a string`)
    if (f.type === 'BOOLEAN' && typeof v !== 'boolean') errors.push(`${at}: not a boolean`)
    if (f.type === 'TIMESTAMP' && !(typeof v === 'string' && ISO.test(v))) errors.push(`${at}: not a timestamp`)
  }
  return errors
}

class Collect extends Writable {
  text = ''
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.text += chunk.toString()
    cb()
  }
}

const stderr = () => Object.assign(new Collect(), { isTTY: false })

async function seed(deps: PlatformDeps, accountId: string, n: number): Promise<void> {
  const inputs = Array.from(
    { length: n },
    (_, i): ContactUpsertInput => ({
      source: 'crm',
      external_id: `ext-${i}`,
      writer: 'manual',
      at: `2026-09-0${1 + (i % 9)}T10:00:00.000Z`,
      origin: `seed:${i}`,
      resolved_by: i === 0 ? 'form' : null,
      patch: {
        identity: { first_name: `First${i}`, last_name: 'Last', full_name: `First${i} Last`, title: i % 2 ? 'CTO' : null },
        company: { name: 'Acme', domain: 'acme.example' },
        location: { city: 'Lyon', state: null, postal_code: '69001' },
        business_email: `p${i}@acme.example`,
        emails: [
          { value: `p${i}@acme.example`, kind: 'work', verified: true },
          { value: null, kind: null, verified: null },
        ],
        phones: i % 2 ? [{ value: '+33100000000', kind: 'mobile', dnc: null, dnc_known: false }] : [],
        traits: [{ key: 'age', label: 'Age', value: '30-40', group: 'demographics' }],
        custom_fields: i === 0 ? { plan: { value: ['a', 'b'], source: 'manual', enriched_at: null } } : {},
      },
    }),
  )
  const outcomes = await deps.contacts.upsertBatch(accountId, inputs, seedMerge)
  expect(outcomes.every((o) => o.result === 'created')).toBe(true)
}

const backends = [
  { name: 'embedded', backend: 'embedded' as const, skip: false },
  { name: 'emulators', backend: 'emulators' as const, skip: !emulators.firestore || !emulators.pubsub },
]

for (const b of backends) {
  describe.skipIf(b.skip)(`export (${b.name})`, () => {
    let deps: PlatformDeps & { cleanup(): Promise<void> }
    let dir: string
    let tenants: StoredTenant[] = []
    let a: AccountRecord
    let other: AccountRecord

    beforeAll(async () => {
      deps = await createTestDeps({ backend: b.backend })
      dir = mkdtempSync(join(tmpdir(), 'lsv-export-'))
      const bare: TenantSpec = { ...ACCOUNT_ONLY, permittedTiers: [1] }
      tenants = [await createTestTenant(deps, bare), await createTestTenant(deps, bare)]
      a = tenants[0]!.account
      other = tenants[1]!.account
      await seed(deps, a.id, 23)
      await seed(deps, other.id, 4)
    })
    afterAll(async () => {
      for (const t of tenants) await t.cleanup()
      await deps.cleanup()
      rmSync(dir, { recursive: true, force: true })
    })

    it('round-trips an account to a file, one schema-valid row per contact', async () => {
      const out = join(dir, 'a.ndjson')
      const err = stderr()
      // a small page size exercises the keyset paging across several pages
      const code = await runExport(['--account', a.public_id, '--out', out, '--page-size', '5'], { deps, stderr: err })
      expect(code, err.text).toBe(0)
      const text = readFileSync(out, 'utf8')
      expect(text.endsWith('\n')).toBe(true)
      const rows = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(rows).toHaveLength(23)
      for (const row of rows) expect(schemaErrors(row, SCHEMA)).toEqual([])
      const expectedIds = Array.from({ length: 23 }, (_, i) => contactIdFor(a.id, 'crm', `ext-${i}`)).sort()
      expect(rows.map((r) => r.contact_id)).toEqual(expectedIds)
      const first = rows.find((r) => r.external_id === 'ext-0')!
      expect(first).toMatchObject({
        account_id: a.id,
        source: 'crm',
        op: 'upsert',
        changed_at: '2026-09-01T10:00:00.000Z',
        first_name: 'First0',
        company_domain: 'acme.example',
        postal_code: '69001',
        resolved_by: 'form',
        name_source: 'manual',
      })
      expect(JSON.parse(first.custom_fields as string)).toEqual({ plan: { enriched_at: null, source: 'manual', value: ['a', 'b'] } })
      expect(err.text).toMatch(/exported 23 contact\(s\) of 1 account/)
    })

    it('accepts the account id as well as the public id, and writes to stdout without --out', async () => {
      const out = new Collect()
      expect(await runExport(['--account', other.id], { deps, stdout: out, stderr: stderr() })).toBe(0)
      const rows = out.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { account_id: string })
      expect(rows).toHaveLength(4)
      expect(new Set(rows.map((r) => r.account_id))).toEqual(new Set([other.id]))
    })

    it('--all pages through every account', async () => {
      const out = new Collect()
      const err = stderr()
      expect(await runExport(['--all', '--page-size', '7'], { deps, stdout: out, stderr: err })).toBe(0)
      const rows = out.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { account_id: string })
      // the store may hold other tests' accounts (shared emulator): count only ours
      expect(rows.filter((r) => r.account_id === a.id)).toHaveLength(23)
      expect(rows.filter((r) => r.account_id === other.id)).toHaveLength(4)
    })

    it('waits for a slow output to drain instead of buffering the whole account', async () => {
      let maxBuffered = 0
      let largestChunk = 0
      const slow = new Writable({
        highWaterMark: 1,
        write(chunk: Buffer, _enc, cb) {
          largestChunk = Math.max(largestChunk, chunk.length)
          // slower than the store's pages, so an exporter that ignores write()'s false piles up chunks
          setTimeout(cb, 20)
        },
      })
      const write = slow.write.bind(slow) as (chunk: string) => boolean
      slow.write = ((chunk: string) => {
        const ok = write(chunk)
        maxBuffered = Math.max(maxBuffered, slow.writableLength)
        return ok
      }) as typeof slow.write
      expect(await runExport(['--account', a.public_id, '--page-size', '2'], { deps, stdout: slow, stderr: stderr() })).toBe(0)
      // with backpressure at most the chunk being written is buffered; without it, all 12 pages
      expect(largestChunk).toBeGreaterThan(0)
      expect(maxBuffered).toBeLessThanOrEqual(largestChunk)
    })

    it('shows a progress line only when stderr is a terminal', async () => {
      const tty = Object.assign(new Collect(), { isTTY: true })
      expect(await runExport(['--account', a.public_id], { deps, stdout: new Collect(), stderr: tty })).toBe(0)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI erase-line sequence a TTY progress line starts with
      expect(tty.text).toMatch(/\rexporting|\r\x1b\[2Kexporting/)
      const pipe = stderr()
      expect(await runExport(['--account', a.public_id], { deps, stdout: new Collect(), stderr: pipe })).toBe(0)
      expect(pipe.text).not.toContain('exporting')
      expect(pipe.text).toMatch(/^exported 23 contact\(s\)/)
    })

    it('answers usage errors with exit code 2', async () => {
      const err = stderr()
      expect(await runExport([], { deps, stderr: err })).toBe(2)
      expect(err.text).toMatch(/exactly one of --account/)
      expect(await runExport(['--account', 'x', '--all'], { deps, stderr: stderr() })).toBe(2)
      expect(await runExport(['--account', `nope${randomSuffix(3)}`], { deps, stdout: new Collect(), stderr: stderr() })).toBe(2)
      expect(await runExport(['--all', '--page-size', '0'], { deps, stderr: stderr() })).toBe(2)
    })

    it('fails with exit code 1 when the output file cannot be opened', async () => {
      const err = stderr()
      expect(await runExport(['--account', a.public_id, '--out', join(dir, 'missing', 'x.ndjson')], { deps, stderr: err })).toBe(1)
      expect(err.text).toMatch(/ENOENT/)
    })
  })
}
