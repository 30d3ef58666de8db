import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from './hcl.ts'

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/g

function resolveSpecifier(from: string, spec: string): string | null {
  let target: string
  if (spec.startsWith('@lsv/shared/')) target = join(ROOT, 'shared', 'src', spec.slice('@lsv/shared/'.length))
  else if (spec.startsWith('.')) target = resolve(dirname(from), spec)
  else return null // a package: not ours
  return existsSync(target) ? target : null
}

/**
 * Every source file of ours a module loads, statically and transitively (type-only imports
 * included: they cost nothing at run time but are rare and harmless here). Paths relative to the
 * repository root.
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
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveSpecifier(file, m[1]!)
      if (target) queue.push(target)
    }
  }
  return seen
}
