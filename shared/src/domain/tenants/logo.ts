import { imageSize } from 'image-size'
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

const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n))
const startsWith = (b: Uint8Array, prefix: readonly number[]) => b.length >= prefix.length && prefix.every((v, i) => b[i] === v)

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const

/** image-size's name for each type we accept */
const SIZE_TYPE: Record<SniffedImage['content_type'], string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' }

/**
 * The type by its magic bytes. Kept here rather than left to image-size, which detects twenty-odd
 * formats (SVG among them): only these three may ever reach its parsers.
 */
function magicType(b: Uint8Array): SniffedImage['content_type'] | null {
  if (startsWith(b, PNG_SIGNATURE)) return 'image/png'
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'image/webp'
  return null
}

/** The pixel size from the header (image-size), when the header reads as that same type. */
function headerSize(b: Uint8Array, type: SniffedImage['content_type']): [number, number] | null {
  try {
    // a copy with a buffer of its own: image-size reads through a DataView over `input.buffer`,
    // which for a Buffer view (pooled, or a subarray) reaches past the bytes into whatever follows
    const size = imageSize(new Uint8Array(b))
    if (size.type !== SIZE_TYPE[type] || !Number.isInteger(size.width) || !Number.isInteger(size.height)) return null
    return [size.width, size.height]
  } catch {
    // a truncated or corrupt header
    return null
  }
}

/**
 * What the bytes are, by their magic bytes, and their pixel size from the header; a problem code
 * when they are not an image this portal shows (or too large).
 */
export function sniffLogo(bytes: Uint8Array): SniffedImage | LogoProblem {
  if (bytes.length === 0) return 'empty'
  if (bytes.length > MAX_LOGO_BYTES) return 'too-large'
  const content_type = magicType(bytes)
  if (!content_type) return 'not-an-image'
  const size = headerSize(bytes, content_type)
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
