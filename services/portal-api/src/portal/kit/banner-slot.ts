import type { FastifyRequest } from 'fastify'
import type { SafeHtml } from './html.ts'

/**
 * The account-wide banner of one request (endpoint-banner.ts computes it in a hook, layout.ts
 * renders it): held apart from both so the layout imports nothing that imports it back.
 */
const banners = new WeakMap<FastifyRequest, SafeHtml>()

export function setBanner(request: FastifyRequest, banner: SafeHtml): void {
  banners.set(request, banner)
}

/** the banner computed for this request, or '' */
export function bannerOf(request: FastifyRequest | undefined): SafeHtml | '' {
  return (request && banners.get(request)) ?? ''
}
