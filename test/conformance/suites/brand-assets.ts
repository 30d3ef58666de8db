import { createHash, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { BrandAssets } from '@lsv/shared/ports/brand-assets.ts'

/** Two stores over one backend, as two portal-api instances would be. */
export interface BrandAssetsHarness {
  store: BrandAssets
  other: BrandAssets
  close(): Promise<void>
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
/** bytes that cover every value (a store that goes through text would mangle them) */
const allBytes = (seed: number, length = 1024) => Uint8Array.from({ length }, (_, i) => (i * 7 + seed) % 256)

/** The behaviour every BrandAssets adapter must share. Call inside a `describe`. */
export function brandAssetsConformance(open: () => Promise<BrandAssetsHarness>): void {
  let h: BrandAssetsHarness
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    await h.close()
  })

  it('put answers the SHA-256 of the bytes; the other instance reads them back byte for byte, with the type', async () => {
    const account = randomUUID()
    const bytes = allBytes(1)
    const id = await h.store.put(account, bytes, 'image/png')
    // mutation: an id that is not the content hash (a random id, a hash of the account) fails this
    expect(id).toBe(sha256(bytes))
    const got = await h.other.get(account, id)
    // mutation: storing the bytes as text (UTF-8 or latin1 round trip) or dropping the type fails this
    expect(got).not.toBeNull()
    expect(got!.id).toBe(id)
    expect(got!.content_type).toBe('image/png')
    expect(Buffer.from(got!.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  it('the largest logo (64 KiB) round-trips', async () => {
    const account = randomUUID()
    const bytes = allBytes(3, 64 * 1024)
    const id = await h.store.put(account, bytes, 'image/webp')
    expect(Buffer.from((await h.other.get(account, id))!.bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  it("another account's id is not found, even with the same bytes stored there", async () => {
    const [a, b] = [randomUUID(), randomUUID()]
    const id = await h.store.put(a, allBytes(5), 'image/jpeg')
    // mutation: looking up by id alone answers a's image to b
    expect(await h.other.get(b, id)).toBeNull()
    await h.store.put(b, allBytes(5), 'image/jpeg')
    await h.store.delete(b, id)
    // deleting b's copy leaves a's
    expect(await h.other.get(a, id)).not.toBeNull()
  })

  it('several images of one account are kept apart until deleted; delete of a missing one is no error', async () => {
    const account = randomUUID()
    const first = await h.store.put(account, allBytes(7), 'image/png')
    const second = await h.other.put(account, allBytes(8), 'image/jpeg')
    expect(second).not.toBe(first)
    // mutation: one row per account (put replacing the previous image) fails this: the old
    // reference must stay readable until the account points at the new one
    expect((await h.store.get(account, first))?.content_type).toBe('image/png')
    await h.other.delete(account, first)
    expect(await h.store.get(account, first)).toBeNull()
    expect((await h.store.get(account, second))?.content_type).toBe('image/jpeg')
    await h.store.delete(account, first)
    await h.store.delete(account, second)
    expect(await h.other.get(account, second)).toBeNull()
  })

  it('the same bytes again are the same id, stored once', async () => {
    const account = randomUUID()
    const bytes = allBytes(9)
    const id = await h.store.put(account, bytes, 'image/png')
    expect(await h.other.put(account, bytes, 'image/png')).toBe(id)
    await h.store.delete(account, id)
    expect(await h.other.get(account, id)).toBeNull()
  })

  it('an id that is not a hash finds nothing', async () => {
    const account = randomUUID()
    await h.store.put(account, allBytes(11), 'image/png')
    expect(await h.store.get(account, 'nope')).toBeNull()
    expect(await h.store.get(account, '../x')).toBeNull()
  })
}
