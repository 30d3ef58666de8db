import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** The repository root, whose node_modules hold openapi-typescript, openapi-fetch and typescript. */
export const ROOT = resolve(import.meta.dirname, '..', '..')

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs a Node script with this Node (the project's pinned one), capturing its output. */
export function runNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    child.on('error', fail)
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }))
  })
}

/**
 * A scratch project outside the repository: a strict tsconfig like ours (ESM, bundler
 * resolution so `./api` finds `api.d.ts`) and a `node_modules` link to the repository's, so
 * `openapi-fetch` resolves as it would in a consumer's project.
 */
export function scratchProject(): { dir: string; write(name: string, text: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-openapi-client-'))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'es2024',
          lib: ['es2024'],
          types: ['node'],
          module: 'esnext',
          moduleResolution: 'bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          exactOptionalPropertyTypes: false,
        },
        include: ['*.ts'],
      },
      null,
      2,
    ),
  )
  return {
    dir,
    write(name, text) {
      const file = join(dir, name)
      writeFileSync(file, text)
      return file
    },
    remove() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** `npx openapi-typescript <document> -o <out>`, run from the installed package. */
export async function generateTypes(documentFile: string, outFile: string): Promise<void> {
  const res = await runNode([join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), documentFile, '-o', outFile])
  if (res.code !== 0) throw new Error(`openapi-typescript failed (${res.code}):\n${res.stdout}\n${res.stderr}`)
}

export interface Diagnostic {
  file: string
  line: number
  code: string
  message: string
}

/** `tsc --noEmit -p <dir>`; the errors it reports (empty when the project type-checks). */
export async function typeCheck(dir: string): Promise<{ diagnostics: Diagnostic[]; output: string; code: number }> {
  const res = await runNode([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'])
  const output = `${res.stdout}${res.stderr}`
  const diagnostics: Diagnostic[] = []
  for (const m of output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/gm)) {
    diagnostics.push({ file: m[1]!, line: Number(m[2]), code: m[3]!, message: m[4]! })
  }
  return { diagnostics, output, code: res.code }
}
