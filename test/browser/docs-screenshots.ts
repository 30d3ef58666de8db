import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')
const SHOTS = join(ROOT, '.tmp', 'screenshots')
const DOCS = join(ROOT, 'docs', 'portal')

/**
 * The docs' screenshots come from the tests: with UPDATE_DOCS_SCREENSHOTS=1 (`npm run
 * screenshots` sets it) each named shot of this run, `.tmp/screenshots/<name>-1280.png`, becomes
 * `docs/portal/<name>.png`, and its `-360.png` replaces `<name>-360.png` where the docs show one;
 * reduced to a small palette with `pngquant 24` when it is installed (the repository stays
 * small). Without the flag: nothing.
 */
export function copyScreenshotsToDocs(names: readonly string[]): void {
  if (process.env.UPDATE_DOCS_SCREENSHOTS !== '1') return
  mkdirSync(DOCS, { recursive: true })
  const pngquant = spawnSync('pngquant', ['--version']).status === 0
  for (const name of names) {
    for (const [from, to] of [
      [`${name}-1280.png`, `${name}.png`],
      [`${name}-360.png`, `${name}-360.png`],
    ] as const) {
      const source = join(SHOTS, from)
      const target = join(DOCS, to)
      // a narrow shot only where the docs show one already (they pick the screens worth it)
      if (!existsSync(source) || (to.endsWith('-360.png') && !existsSync(target))) continue
      if (!pngquant || spawnSync('pngquant', ['24', '--force', '--output', target, source]).status !== 0) copyFileSync(source, target)
    }
  }
}
