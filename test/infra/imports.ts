import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from './hcl.ts'

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/g
/** `import('./app.ts')`: the apps a service definition loads when it builds them */
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g
/** `new URL('./background.ts', import.meta.url)`: a module loaded by URL (a background, a worker thread's entry) */
const MODULE_URL = /\bnew URL\(\s*['"]([^'"]+\.ts)['"]\s*,\s*import\.meta\.url\s*\)/g

function resolveSpecifier(from: string, spec: string): string | null {
  let target: string
  if (spec.startsWith('@lsv/shared/')) target = join(ROOT, 'shared', 'src', spec.slice('@lsv/shared/'.length))
  else if (spec.startsWith('.')) target = resolve(dirname(from), spec)
  else return null // a package: not ours
  return existsSync(target) ? target : null
}

/**
 * Every source file of ours a module loads, transitively: static imports (type-only ones
 * included: they cost nothing at run time but are rare and harmless here), `import()` of a
 * literal path and modules named by `new URL('./x.ts', import.meta.url)` (what a service loads
 * lazily or on a worker thread still runs in its process). Paths relative to the repository root.
 */
export function reachableModules(entry: string): Set<string> {
  const seen = new Set<string>()
  const queue = [join(ROOT, entry)]
  while (queue.length > 0) {
    const file = queue.pop()!
    const rel = relative(ROOT, file)
    if (seen.has(rel)) continue
    seen.add(rel)
    const text = readFileSync(file, 'utf8')
    for (const m of [...text.matchAll(IMPORT), ...text.matchAll(DYNAMIC_IMPORT), ...text.matchAll(MODULE_URL)]) {
      const target = resolveSpecifier(file, m[1]!)
      if (target) queue.push(target)
    }
  }
  return seen
}
