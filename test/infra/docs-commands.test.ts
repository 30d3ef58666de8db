import { describe, expect, it } from 'vitest'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { CHECK_ROOT, ROOT } from './hcl.ts'

/**
 * Every command docs/deploy.md and docs/operations.md tell an operator to run exists, with the
 * flags they give it: gcloud, bq and terraform are asked for their own help, the CLI for its own.
 */
const DOCS = ['docs/deploy.md', 'docs/operations.md']

/** shell command lines of a markdown file: fenced sh blocks (continuations joined) and inline code */
function commandLines(markdown: string): string[] {
  const lines: string[] = []
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    lines.push(...block[1]!.replace(/\\\n\s*/g, ' ').split('\n'))
  }
  for (const inline of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)) lines.push(inline[1]!)
  const commands: string[] = []
  for (const line of lines) {
    const code = line.replace(/\s#\s.*$/, '').replace(/^\s*#.*$/, '')
    // the parts of pipelines, lists and command substitutions
    for (const part of code.split(/\||&&|;|\$\(|\)/)) {
      const c = part.trim().replace(/\s+/g, ' ')
      if (/^(gcloud|bq|terraform|npm run (-s )?cli --) /.test(c) || c.startsWith('deploy/')) commands.push(c)
    }
  }
  return commands
}

function tokens(command: string): string[] {
  return [...command.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map((m) => m[0]!)
}

const flagNames = (ts: string[]) => ts.filter((t) => /^--?[a-z]/.test(t)).map((t) => t.split('=')[0]!)

const help = new Map<string, Promise<{ ok: boolean; text: string }>>()
function gcloudHelp(path: string[]): Promise<{ ok: boolean; text: string }> {
  const key = path.join(' ')
  if (!help.has(key)) {
    help.set(
      key,
      new Promise((resolve, reject) => {
        const child = spawn('gcloud', [...path, '--help'], { env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1', PAGER: 'cat' } })
        let text = ''
        child.stdout.on('data', (d: Buffer) => (text += d.toString()))
        child.on('error', () => reject(new Error('gcloud not found: the test suite needs the Google Cloud CLI')))
        // biome-ignore lint/suspicious/noControlCharactersInRegex: strips gcloud's ANSI colour codes
        child.on('close', (code) => resolve({ ok: code === 0, text: text.replace(/\x1b\[[0-9;]*m/g, '') }))
      }),
    )
  }
  return help.get(key)!
}

/**
 * How many of `words` name a gcloud command (the rest are positionals), from the command tree the
 * installed Cloud SDK ships for shell completion (<sdk>/data/cli/gcloud_completions.py, a JSON
 * literal); null when the tree is not there or does not list them (hidden commands). It only
 * says which help page to ask for first: each group on the way needs no page of its own (~2.5 s
 * of CPU each), because gcloud refuses the command's page when a group in it does not exist.
 */
const completionTree = (() => {
  let tree: { commands: Record<string, CommandNode> } | null = null
  return () => {
    if (tree) return tree
    const gcloud = (process.env.PATH ?? '')
      .split(':')
      .map((dir) => join(dir, 'gcloud'))
      .find((file) => existsSync(file))
    const file = gcloud && join(realpathSync(gcloud), '..', '..', 'data', 'cli', 'gcloud_completions.py')
    if (!file || !existsSync(file)) return null
    const text = readFileSync(file, 'utf8')
    tree = JSON.parse(text.slice(text.indexOf('{'))) as { commands: Record<string, CommandNode> }
    return tree
  }
})()
interface CommandNode {
  commands: Record<string, CommandNode>
}
function commandDepth(words: string[]): number | null {
  let node = completionTree()
  for (let n = 1; node && n <= words.length; n++) {
    node = node.commands[words[n - 1]!] ?? null
    if (node && Object.keys(node.commands).length === 0) return n
  }
  return null
}

/**
 * `bq help <command>`: bq exits 1 for every help page, so whether the command exists is read from
 * the page itself (a known command lists "Flags for <command>:", an unknown one the command list).
 */
const bqPages = new Map<string, { known: boolean; text: string }>()
function bqHelp(command: string): { known: boolean; text: string } {
  const page = bqPages.get(command)
  if (page) return page
  const res = spawnSync('bq', ['help', command], { encoding: 'utf8', env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' } })
  if (res.error) throw new Error('bq not found: it ships with the Google Cloud CLI, which the test suite needs')
  bqPages.set(command, { known: res.stdout.includes(`Flags for ${command}:`), text: res.stdout })
  return bqPages.get(command)!
}

/** bq lists a boolean flag as --[no]name and takes --name and --noname */
const bqHasFlag = (help: string, flag: string) => {
  const name = flag.replace(/^--?/, '')
  return help.includes(`--${name}:`) || help.includes(`--[no]${name}:`) || (name.startsWith('no') && help.includes(`--[no]${name.slice(2)}:`))
}

/** a flag of `gcloud run services update` that changes the service (not only where or how to call) */
const NON_CHANGING = new Set(['--region', '--project', '--quiet', '--async', '--format', '--verbosity', '--account'])

describe('commands in the deployment and operations docs', () => {
  const all = DOCS.flatMap((file) => commandLines(readFileSync(join(CHECK_ROOT, file), 'utf8')).map((c) => ({ file, c })))

  it('finds the commands to check (control)', () => {
    expect(all.filter(({ c }) => c.startsWith('gcloud ')).length).toBeGreaterThan(15)
    expect(all.filter(({ c }) => c.startsWith('npm run')).length).toBeGreaterThan(3)
    expect(commandLines('```sh\ngcloud run services update x \\\n  --image=y | cat\n```')).toEqual(['gcloud run services update x --image=y'])
  })

  it('every gcloud command exists and accepts the flags it is given', async () => {
    const gcloud = all.filter(({ c }) => c.startsWith('gcloud '))
    // one path at a time per command, commands checked four at a time (gcloud is slow to start)
    const check = async ({ file, c }: { file: string; c: string }) => {
      const ts = tokens(c).slice(1)
      const firstFlag = ts.findIndex((t) => t.startsWith('-'))
      const words = firstFlag === -1 ? ts : ts.slice(0, firstFlag)
      // walk down the groups until a command (its help lists no further GROUP or COMMAND);
      // gcloud refuses an unknown group or command, but prints help whatever positionals follow
      // (from where the command tree says the command ends: the groups before it need no page)
      let path: string[] = []
      let text = ''
      for (let n = commandDepth(words) ?? 1; n <= words.length; n++) {
        const h = await gcloudHelp(words.slice(0, n))
        expect(h.ok, `${file}: "gcloud ${words.slice(0, n).join(' ')}" does not exist (${c})`).toBe(true)
        if (!/\n(GROUPS|COMMANDS)\n/.test(h.text)) {
          path = words.slice(0, n)
          text = h.text
          break
        }
      }
      expect(path.length, `${file}: ${c} names a group, not a command`).toBeGreaterThan(0)
      for (const flag of flagNames(ts)) expect(text, `${file}: gcloud ${path.join(' ')} has no ${flag}`).toContain(flag)
      // an update that changes nothing fails ("No configuration change requested")
      if (path.join(' ') === 'run services update') {
        expect(
          flagNames(ts).filter((f) => !NON_CHANGING.has(f)),
          `${file}: ${c} changes nothing`,
        ).not.toEqual([])
      }
    }
    const queue = [...gcloud]
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (queue.length > 0) await check(queue.shift()!)
      }),
    )
    // a cap, not a measurement: ~25 gcloud help pages took 183 s alone at load average 15-17 on
    // 2 cores (2026-11-27) and over 240 s beside the other infra files
  }, 600_000)

  it('every bq command exists and accepts the flags it is given', () => {
    const bq = all.filter(({ c }) => c.startsWith('bq '))
    expect(bq.map(({ c }) => c.split(' ')[1]).sort()).toEqual(expect.arrayContaining(['load', 'query']))
    // control: the same reading refuses a command and a flag bq does not have
    expect(bqHelp('loadd').known).toBe(false)
    const load = bqHelp('load')
    expect(load.known).toBe(true)
    expect(bqHasFlag(load.text, '--source_format')).toBe(true)
    expect(bqHasFlag(load.text, '--source_formats')).toBe(false)
    for (const { file, c } of bq) {
      const ts = tokens(c).slice(1)
      const command = ts.find((t) => !t.startsWith('-'))!
      // flags before the command are global (bq --help lists them), after it the command's own
      const globals = flagNames(ts.slice(0, ts.indexOf(command)))
      expect(globals, `${file}: ${c}: global flags are not checked here`).toEqual([])
      const help = bqHelp(command)
      expect(help.known, `${file}: "bq ${command}" does not exist (${c})`).toBe(true)
      for (const flag of flagNames(ts.slice(ts.indexOf(command) + 1))) expect(bqHasFlag(help.text, flag), `${file}: bq ${command} has no ${flag}`).toBe(true)
    }
  }, 120_000)

  it('every CLI command exists and accepts the options it is given', () => {
    const cli = all.filter(({ c }) => c.startsWith('npm run'))
    for (const { file, c } of cli) {
      const ts = tokens(c.replace(/^npm run (-s )?cli --\s*/, ''))
      const firstFlag = ts.findIndex((t) => t.startsWith('-'))
      const words = (firstFlag === -1 ? ts : ts.slice(0, firstFlag)).slice(0, 2)
      const ask = (w: string[]) => spawnSync(process.execPath, ['scripts/cli.ts', ...w, '--help'], { cwd: ROOT, encoding: 'utf8' })
      // a resource with a verb (`keys create`), or a command of its own (`export`)
      let res = ask(words)
      if (res.status !== 0 && words.length === 2) res = ask(words.slice(0, 1))
      const out = `${res.stdout}${res.stderr}`
      expect(res.status, `${file}: ${c}\n${out}`).toBe(0)
      for (const flag of flagNames(ts)) expect(out, `${file}: ${c}: unknown option ${flag}`).toContain(flag)
    }
  }, 120_000)

  it('every terraform command exists with its flags, and the scripts named exist', () => {
    for (const { file, c } of all.filter(({ c }) => c.startsWith('terraform '))) {
      const all = tokens(c).slice(1)
      // global options (-chdir=...) come before the subcommand and are listed by `terraform -help`
      const globals = all.filter((t, i) => t.startsWith('-') && all.slice(0, i).every((x) => x.startsWith('-')))
      const ts = all.filter((t) => !globals.includes(t))
      const words = ts
        .filter((t) => !t.startsWith('-'))
        .slice(0, 2)
        .filter((w) => /^[a-z]+$/.test(w))
      let res = spawnSync('terraform', [...words, '-help'], { encoding: 'utf8' })
      if (res.status !== 0 && words.length === 2) res = spawnSync('terraform', [words[0]!, '-help'], { encoding: 'utf8' })
      expect(res.status, `${file}: ${c}`).toBe(0)
      for (const flag of flagNames(ts)) expect(res.stdout, `${file}: ${c}: ${flag}`).toContain(flag.replace(/^--/, '-'))
      const main = spawnSync('terraform', ['-help'], { encoding: 'utf8' }).stdout
      for (const flag of flagNames(globals)) expect(main, `${file}: ${c}: ${flag}`).toContain(flag)
    }
    for (const { file, c } of all.filter(({ c }) => c.startsWith('deploy/'))) expect(existsSync(join(CHECK_ROOT, c.split(' ')[0]!)), `${file}: ${c}`).toBe(true)
  }, 60_000)
})
