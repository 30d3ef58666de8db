import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { runExport } from '../../scripts/cli/export.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { AccountRecord, ContactRecord } from '@lsv/shared/model/records.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * The export's stream handling (stream.pipeline): an error on the output stops the reading, and
 * an error while reading ends the run with exit 1. Backpressure and the rows themselves are
 * test/export/export.test.ts's.
 */

class Collect extends Writable {
  text = ''
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.text += chunk.toString()
    cb()
  }
}

const stderr = () => Object.assign(new Collect(), { isTTY: false })

let deps: PlatformDeps & { cleanup(): Promise<void> }
let tenant: StoredTenant
let account: AccountRecord

/** The deps with contacts.list counted, and failing from call `failAt` on when given. */
function counting(failAt?: number): { deps: PlatformDeps; calls: () => number } {
  let calls = 0
  const list = deps.contacts.list.bind(deps.contacts)
  const contacts = Object.create(deps.contacts) as PlatformDeps['contacts']
  contacts.list = async (...args: Parameters<typeof list>): Promise<ContactRecord[]> => {
    calls++
    if (failAt !== undefined && calls >= failAt) throw new Error('store read failed (test)')
    return list(...args)
  }
  return { deps: { ...deps, contacts }, calls: () => calls }
}

beforeAll(async () => {
  deps = await createTestDeps()
  tenant = await createTestTenant(deps, { ...ACCOUNT_ONLY, permittedTiers: [1] })
  account = tenant.account
  const at = '2026-09-01T10:00:00.000Z'
  await deps.contacts.upsertBatch(
    account.id,
    Array.from({ length: 20 }, (_, i) => ({
      source: 'crm',
      external_id: `e${i}`,
      writer: 'manual' as const,
      at,
      origin: `seed:${i}`,
      resolved_by: null,
      patch: { business_email: `p${i}@acme.example` },
    })),
    (existing, input, accountId) =>
      existing
        ? null
        : {
            id: contactIdFor(accountId, input.source, input.external_id),
            account_id: accountId,
            source: input.source,
            external_id: input.external_id,
            subject_type: 'contact',
            identity: {},
            company: {},
            location: {},
            business_email: input.patch.business_email ?? null,
            emails: [],
            phones: [],
            traits: [],
            custom_fields: {},
            name_source: 'manual',
            resolved_by: null,
            first_seen_at: at,
            last_seen_at: at,
            updated_at: at,
            versions: {},
          },
  )
})

afterAll(async () => {
  await tenant.cleanup()
  await deps.cleanup()
})

describe('export stream handling', () => {
  it('all 20 rows in 10 pages when nothing fails (the control)', async () => {
    const { deps: d, calls } = counting()
    const out = new Collect()
    const err = stderr()
    expect({ code: await runExport(['--account', account.public_id, '--page-size', '2'], { deps: d, stdout: out, stderr: err }), err: err.text }).toEqual({
      code: 0,
      err: expect.stringMatching(/^exported 20 contact\(s\) of 1 account/),
    })
    expect(out.text.trimEnd().split('\n')).toHaveLength(20)
    expect(calls()).toBe(11)
  })

  it('an output that fails stops the export: exit 1, the error said, no further pages read', async () => {
    const { deps: d, calls } = counting()
    let writes = 0
    const broken = new Writable({
      write(_chunk, _enc, cb) {
        writes++
        cb(writes >= 2 ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : null)
      },
    })
    const err = stderr()
    expect(await runExport(['--account', account.public_id, '--page-size', '2'], { deps: d, stdout: broken, stderr: err })).toBe(1)
    expect(err.text).toMatch(/EPIPE/)
    expect(writes).toBe(2)
    // at most the page being read when the write failed comes after it; never the other 7
    expect(calls()).toBeLessThanOrEqual(3)
  })

  it('a failing store read ends the run with exit 1, after the rows read before it', async () => {
    const { deps: d } = counting(3)
    const out = new Collect()
    const err = stderr()
    expect(await runExport(['--account', account.public_id, '--page-size', '2'], { deps: d, stdout: out, stderr: err })).toBe(1)
    expect(err.text).toMatch(/store read failed \(test\)/)
    expect(out.text.trimEnd().split('\n')).toHaveLength(4)
  })
})
