import type { PlatformDeps } from '../../ports/deps.ts'
import type { AccountRecord, LogoRef } from '../../model/records.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'

/**
 * The tenant's logo (issue 22, job 9; docs/portal.md, "Branding"). An image the tenant uploads is
 * accepted only when its own bytes say it is a PNG, JPEG or WebP (the magic bytes; never the
 * client's content type or file name), it is at most MAX_LOGO_BYTES, and its header gives pixel
 * dimensions of at most MAX_LOGO_SIDE a side. SVG is never accepted: it is a document that can
 * carry script. GIF is not either (animation in a header is a distraction, and PNG does the rest).
 *
 * The bytes go to the BrandAssets store (ports/brand-assets.ts), the account keeps only the
 * reference (`portal_logo`), so no account read carries an image.
 */

export const MAX_LOGO_BYTES = 64 * 1024
const MAX_LOGO_SIDE = 1024

/**
 * Why an upload was refused, as a fixed code: the upload answers 303 back to the Settings screen
 * with the code in the query (`?logo_problem=`), never free text, so a URL cannot put words on
 * the tenant's screen; unknown codes show nothing.
 */
const LOGO_PROBLEMS = {
  empty: 'Choose an image file to upload.',
  'too-large': `This file is larger than ${MAX_LOGO_BYTES / 1024} KiB. Save the logo smaller (a few hundred pixels wide is plenty) and upload it again.`,
  'not-an-image': 'This file is not a PNG, JPEG or WebP image (SVG and GIF cannot be used). Save the logo as PNG and upload it again.',
  dimensions: `This image is larger than ${MAX_LOGO_SIDE} × ${MAX_LOGO_SIDE} pixels, or its size cannot be read. Scale it down and upload it again.`,
  unreadable: 'The upload could not be read. Choose the file again and send the form once more.',
} as const

export type LogoProblem = keyof typeof LOGO_PROBLEMS

/** The words for a refusal code, or null for anything else (a code from a URL is client input). */
export function logoProblemText(code: unknown): string | null {
  return typeof code === 'string' && Object.hasOwn(LOGO_PROBLEMS, code) ? LOGO_PROBLEMS[code as LogoProblem] : null
}

export interface SniffedImage {
  content_type: LogoRef['content_type']
  width: number
  height: number
}

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8)
const le24 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n))
const startsWith = (b: Uint8Array, prefix: readonly number[]) => b.length >= prefix.length && prefix.every((v, i) => b[i] === v)

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const

/** PNG: the first chunk is IHDR (the format requires it), width and height big-endian. */
function pngSize(b: Uint8Array): [number, number] | null {
  return b.length >= 24 && ascii(b, 12, 4) === 'IHDR' ? [be32(b, 16), be32(b, 20)] : null
}

/** JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): not DHT (C4), JPG (C8), DAC (CC). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf])

/**
 * JPEG: walks the marker segments (each names its length) to the first start-of-frame, which
 * holds height then width. Bounded by the file's length (at most MAX_LOGO_BYTES); a scan or end
 * before any frame header means no readable size.
 */
function jpegSize(b: Uint8Array): [number, number] | null {
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null
    const marker = b[i + 1]!
    if (marker === 0xff) {
      i += 1 // fill byte
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2 // no length
      continue
    }
    if (marker === 0xda || marker === 0xd9) return null
    if (SOF.has(marker)) return i + 9 <= b.length ? [be16(b, i + 7), be16(b, i + 5)] : null
    i += 2 + be16(b, i + 2)
  }
  return null
}

/** WebP (RIFF container): the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpSize(b: Uint8Array): [number, number] | null {
  if (b.length < 30) return null
  const chunk = ascii(b, 12, 4)
  // lossy: a key frame's start code, then 14-bit width and height
  if (chunk === 'VP8 ') return b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a ? [le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff] : null
  // lossless: signature 0x2f, then 14 bits each of width - 1 and height - 1
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return null
    const [b1, b2, b3, b4] = [b[21]!, b[22]!, b[23]!, b[24]!]
    return [1 + (b1 | ((b2 & 0x3f) << 8)), 1 + ((b2 >> 6) | (b3 << 2) | ((b4 & 0x0f) << 10))]
  }
  // extended: 24-bit canvas width - 1 and height - 1
  if (chunk === 'VP8X') return [1 + le24(b, 24), 1 + le24(b, 27)]
  return null
}

/**
 * What the bytes are, by their magic bytes, and their pixel size from the header; a problem code
 * when they are not an image this portal shows (or too large).
 */
export function sniffLogo(bytes: Uint8Array): SniffedImage | LogoProblem {
  if (bytes.length === 0) return 'empty'
  if (bytes.length > MAX_LOGO_BYTES) return 'too-large'
  let content_type: SniffedImage['content_type']
  let size: [number, number] | null
  if (startsWith(bytes, PNG_SIGNATURE)) [content_type, size] = ['image/png', pngSize(bytes)]
  else if (startsWith(bytes, [0xff, 0xd8, 0xff])) [content_type, size] = ['image/jpeg', jpegSize(bytes)]
  else if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') [content_type, size] = ['image/webp', webpSize(bytes)]
  else return 'not-an-image'
  if (!size) return 'dimensions'
  const [width, height] = size
  if (width < 1 || height < 1 || width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE) return 'dimensions'
  return { content_type, width, height }
}

export type LogoDeps = TenantDeps & Pick<PlatformDeps, 'brandAssets'>

/** The account's logo, or null when it has none. */
export function logoOf(account: Pick<AccountRecord, 'portal_logo'>): LogoRef | null {
  return account.portal_logo ?? null
}

/**
 * Stores the logo and points the account's branding at it (one account write: the audit entry
 * goes with it, domain/audit/audited-change.ts). The bytes are written first, so a reference
 * never names missing bytes; the previous image is deleted after the swap. Refused with nothing
 * stored: anything sniffLogo refuses (400, the issue's code is the LogoProblem).
 */
export async function setPortalLogo(deps: LogoDeps, accountId: string, bytes: Uint8Array): Promise<LogoRef> {
  const account = await requireAccount(deps, accountId)
  const sniffed = sniffLogo(bytes)
  if (typeof sniffed === 'string') throw invalidPayload(issue('/logo', sniffed, LOGO_PROBLEMS[sniffed]))
  const id = await deps.brandAssets.put(accountId, bytes, sniffed.content_type)
  const logo: LogoRef = { id, content_type: sniffed.content_type, size: bytes.length }
  const before = logoOf(account)
  await deps.tenants.updateAccount(accountId, { portal_logo: logo, updated_at: nowIso(deps) })
  if (before && before.id !== id) await deps.brandAssets.delete(accountId, before.id)
  return logo
}

/**
 * Removes the logo: the reference first (the screens stop showing it), then the bytes. An account
 * without a logo is left as it is: nothing is written, so nothing is audited.
 */
export async function removePortalLogo(deps: LogoDeps, accountId: string): Promise<LogoRef | null> {
  const account = await requireAccount(deps, accountId)
  const before = logoOf(account)
  if (!before) return null
  await deps.tenants.updateAccount(accountId, { portal_logo: null, updated_at: nowIso(deps) })
  await deps.brandAssets.delete(accountId, before.id)
  return before
}
