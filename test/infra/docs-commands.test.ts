import { describe, expect, it } from 'vitest'
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { CHECK_ROOT, ROOT } from './hcl.ts'

/**
 * Every command docs/deploy.md and docs/operations.md tell an operator to run exists, with the
 * flags they give it: gcloud's commands and flags are read from the command tree the installed
 * Cloud SDK ships (one real help page proves the tree is gcloud's; gcloud is asked itself only for
 * what the tree does not list), bq's commands from its tree and their flags from bq's own help,
 * terraform's and the CLI's from their own help.
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

/** the installed Cloud SDK's directory (<sdk>/bin/gcloud is on PATH, often through a symlink) */
const sdkDir = (() => {
  const gcloud = (process.env.PATH ?? '')
    .split(':')
    .map((dir) => join(dir, 'gcloud'))
    .find((file) => existsSync(file))
  if (!gcloud) throw new Error('gcloud not found: the test suite needs the Google Cloud CLI')
  return join(realpathSync(gcloud), '..', '..')
})()

/** runs a CLI to its end (without holding up the other tests' processes): exit code and stdout */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1', PAGER: 'cat', ...env } })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.on('error', () => reject(new Error(`${command} not found: it ships with the Google Cloud CLI, which the test suite needs`)))
    child.on('close', (code) => resolve({ code, stdout }))
  })
}

/** one promise per page: a page asked for twice is read once */
function cached<T>(compute: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const pages = new Map<string, Promise<T>>()
  return (key) => {
    if (!pages.has(key)) pages.set(key, compute(key))
    return pages.get(key)!
  }
}

/**
 * gcloud's help page for a command path ("run services update"). Each page is a Python process
 * with ~2–4 s of CPU, so pages are asked for only where the command tree below cannot answer
 * (commands it does not list) and to prove the tree matches the installed gcloud.
 */
const gcloudHelp = cached(async (path) => {
  const { code, stdout } = await run('gcloud', [...path.split(' '), '--help'])
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips gcloud's ANSI colour codes
  return { ok: code === 0, text: stdout.replace(/\x1b\[[0-9;]*m/g, '') }
})

interface CommandNode {
  commands: Record<string, CommandNode>
  /** flag name → "bool", "value", "dynamic" or the list of values it takes */
  flags: Record<string, unknown>
}
/**
 * The command tree, with each command's flags, that the installed Cloud SDK ships for shell
 * completion (<sdk>/data/cli/gcloud_completions.py, a JSON literal after a Python assignment).
 * Its root's flags are the gcloud-wide ones (--project, --format, --quiet, ...), which every
 * command takes. Hidden commands (`gcloud meta ...`) are not in it.
 */
const gcloudTree = (() => {
  const text = readFileSync(join(sdkDir, 'data', 'cli', 'gcloud_completions.py'), 'utf8')
  return JSON.parse(text.slice(text.indexOf('{'))) as CommandNode
})()

/** the flags a gcloud help page lists in its SYNOPSIS (a boolean's --[no-]name as --name), gcloud-wide flags aside */
function synopsisFlags(page: string): string[] {
  const synopsis = page.slice(page.indexOf('\nSYNOPSIS\n'), page.indexOf('\nDESCRIPTION\n'))
  return [...new Set([...synopsis.matchAll(/--(?:\[no-\])?([a-z0-9-]+)/g)].map((m) => `--${m[1]}`))].sort()
}

/**
 * What is wrong with a gcloud command line of the docs (nothing: []), and the command it names.
 * The command and its flags are looked up in the SDK's command tree. A path the tree does not
 * list (a hidden command, or a misspelt one) is asked of gcloud itself, in one page: gcloud
 * refuses an unknown group or command, but prints a command's help whatever positionals follow.
 */
async function gcloudProblems(c: string): Promise<{ path: string; problems: string[] }> {
  const ts = tokens(c).slice(1)
  const firstFlag = ts.findIndex((t) => t.startsWith('-'))
  const words = firstFlag === -1 ? ts : ts.slice(0, firstFlag)
  const flags = flagNames(ts)
  let node = gcloudTree
  let depth = 0
  while (depth < words.length && node.commands[words[depth]!]) node = node.commands[words[depth++]!]!
  const isGroup = (n: CommandNode) => Object.keys(n.commands).length > 0
  if (!isGroup(node)) {
    const path = words.slice(0, depth).join(' ')
    const unknown = flags.filter((f) => !(f in node.flags) && !(f in gcloudTree.flags))
    return { path, problems: unknown.map((f) => `gcloud ${path} has no ${f}`) }
  }
  const path = words.join(' ')
  if (depth === words.length) return { path, problems: ['it names a group, not a command'] }
  // the tree does not list it: gcloud's own page decides
  const h = await gcloudHelp(path)
  if (!h.ok) return { path, problems: [`"gcloud ${path}" does not exist`] }
  if (/\n(GROUPS|COMMANDS)\n/.test(h.text)) return { path, problems: ['it names a group, not a command'] }
  return { path, problems: flags.filter((f) => !h.text.includes(f)).map((f) => `gcloud ${path} has no ${f}`) }
}

/** bq's command tree (<sdk>/data/cli/bq.json): its commands, but not their flags (the tree lists none) */
const bqCommands = (() => {
  const tree = JSON.parse(readFileSync(join(sdkDir, 'data', 'cli', 'bq.json'), 'utf8')) as { commands: Record<string, unknown> }
  return new Set(Object.keys(tree.commands))
})()

/**
 * `bq help <command>`, for the command's flags: bq exits 1 for every help page, so whether the
 * command exists is read from the page itself (a known command lists "Flags for <command>:", an
 * unknown one the command list).
 */
const bqHelp = cached(async (command) => {
  const { stdout } = await run('bq', ['help', command])
  return { known: stdout.includes(`Flags for ${command}:`), text: stdout }
})

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

  it("the SDK's command tree is the installed gcloud's, and refuses what gcloud refuses (control)", async () => {
    // one real help page, read against the tree: the same flags, and the same gcloud-wide ones
    const page = await gcloudHelp('run services update')
    expect(page.ok).toBe(true)
    const update = gcloudTree.commands.run!.commands.services!.commands.update!
    expect(synopsisFlags(page.text)).toEqual(Object.keys(update.flags).sort())
    expect(synopsisFlags(page.text).length).toBeGreaterThan(20)
    const wide = page.text
      .slice(page.text.indexOf('\nGCLOUD WIDE FLAGS\n'))
      .split('\n\n')[0]!
      .match(/--[a-z-]+/g)
    expect(wide?.length).toBeGreaterThan(5)
    expect(Object.keys(gcloudTree.flags)).toEqual(expect.arrayContaining(wide!))
    // the reading accepts a right command line and refuses a misspelt flag and a group
    expect(await gcloudProblems('gcloud run services update x --image=y --project=p')).toEqual({ path: 'run services update', problems: [] })
    expect((await gcloudProblems('gcloud run services update x --imagee=y')).problems).toEqual(['gcloud run services update has no --imagee'])
    expect((await gcloudProblems('gcloud run services')).problems).toEqual(['it names a group, not a command'])
  }, 300_000)

  it('every gcloud command exists and accepts the flags it is given', async () => {
    const gcloud = all.filter(({ c }) => c.startsWith('gcloud '))
    const checked = await Promise.all(gcloud.map(async ({ file, c }) => ({ file, c, ...(await gcloudProblems(c)) })))
    // every command line's problems at once
    expect(checked.flatMap(({ file, c, problems }) => problems.map((p) => `${file}: ${c}: ${p}`))).toEqual([])
    for (const { file, c, path } of checked) {
      // an update that changes nothing fails ("No configuration change requested")
      if (path === 'run services update') {
        expect(
          flagNames(tokens(c)).filter((f) => !NON_CHANGING.has(f)),
          `${file}: ${c} changes nothing`,
        ).not.toEqual([])
      }
    }
    // a cap, not a measurement: the commands the tree does not list are asked of gcloud, a
    // help page ~2–4 s of CPU each (~25 pages took 183 s at load average 15-17 on 2 cores)
  }, 300_000)

  it('every bq command exists and accepts the flags it is given', async () => {
    const bq = all.filter(({ c }) => c.startsWith('bq '))
    expect(bq.map(({ c }) => c.split(' ')[1]).sort()).toEqual(expect.arrayContaining(['load', 'query']))
    const commands = bq.map(
      ({ c }) =>
        tokens(c)
          .slice(1)
          .find((t) => !t.startsWith('-'))!,
    )
    // the pages of the commands the docs use, read at once (each a Python process)
    const pages = new Map(await Promise.all([...new Set(commands)].map(async (command) => [command, await bqHelp(command)] as const)))
    // control: the same reading refuses a command and a flag bq does not have
    expect(bqCommands.has('load')).toBe(true)
    expect(bqCommands.has('loadd')).toBe(false)
    const load = pages.get('load')!
    expect(load.known).toBe(true)
    expect(bqHasFlag(load.text, '--source_format')).toBe(true)
    expect(bqHasFlag(load.text, '--source_formats')).toBe(false)
    for (const { file, c } of bq) {
      const ts = tokens(c).slice(1)
      const command = ts.find((t) => !t.startsWith('-'))!
      // flags before the command are global (bq --help lists them), after it the command's own
      const globals = flagNames(ts.slice(0, ts.indexOf(command)))
      expect(globals, `${file}: ${c}: global flags are not checked here`).toEqual([])
      const help = pages.get(command)!
      expect(bqCommands.has(command) && help.known, `${file}: "bq ${command}" does not exist (${c})`).toBe(true)
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
    // one page per distinct subcommand (`terraform apply` is in the docs ten times)
    const pages = new Map<string, SpawnSyncReturns<string>>()
    const terraformHelp = (words: string[]) => {
      const key = words.join(' ')
      if (!pages.has(key)) pages.set(key, spawnSync('terraform', [...words, '-help'], { encoding: 'utf8' }))
      return pages.get(key)!
    }
    for (const { file, c } of all.filter(({ c }) => c.startsWith('terraform '))) {
      const all = tokens(c).slice(1)
      // global options (-chdir=...) come before the subcommand and are listed by `terraform -help`
      const globals = all.filter((t, i) => t.startsWith('-') && all.slice(0, i).every((x) => x.startsWith('-')))
      const ts = all.filter((t) => !globals.includes(t))
      const words = ts
        .filter((t) => !t.startsWith('-'))
        .slice(0, 2)
        .filter((w) => /^[a-z]+$/.test(w))
      let res = terraformHelp(words)
      if (res.status !== 0 && words.length === 2) res = terraformHelp([words[0]!])
      expect(res.status, `${file}: ${c}`).toBe(0)
      for (const flag of flagNames(ts)) expect(res.stdout, `${file}: ${c}: ${flag}`).toContain(flag.replace(/^--/, '-'))
      const main = terraformHelp([]).stdout
      for (const flag of flagNames(globals)) expect(main, `${file}: ${c}: ${flag}`).toContain(flag)
    }
    for (const { file, c } of all.filter(({ c }) => c.startsWith('deploy/'))) expect(existsSync(join(CHECK_ROOT, c.split(' ')[0]!)), `${file}: ${c}`).toBe(true)
  }, 60_000)
})
