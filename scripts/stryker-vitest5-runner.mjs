// The StrykerJS vitest runner (@stryker-mutator/vitest-runner 9.6.1) made to select tests on
// vitest 5, registered as test runner `vitest-5` (stryker.config.mjs).
//
// Why: for each mutant the runner runs only the tests that covered it, selected by a name
// pattern built from "suite test" (names joined with a space). Vitest 5 matches the pattern
// against "suite > test", so the pattern selects no test at all and every covered mutant is
// reported "survived" having run nothing (stryker-js#6210, "Ran 0.00 tests per mutant").
// Here the pattern's spaces also accept vitest 5's " > " separator. At worst a test whose own
// name contains " > " is selected too: an extra test run, never a missed one.
//
// Also: a mutant that makes a test FILE fail (its import throws, e.g. a constant table that no
// longer parses, or a hook fails) leaves no failed test, only a failed file, and the runner scored
// it "survived" (stryker-js#6150). Here a run with a failed file and no failed test is "killed".
import { commonTokens, declareFactoryPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin'
import { MutantRunStatus } from '@stryker-mutator/api/test-runner'
import { strykerPlugins as vitestPlugins } from '@stryker-mutator/vitest-runner'

const upstream = vitestPlugins.find((p) => p.kind === PluginKind.TestRunner && p.name === 'vitest')
if (!upstream) throw new Error('@stryker-mutator/vitest-runner no longer declares the "vitest" test runner')

/** `project.config.testNamePattern`, rewritten whenever the runner sets it */
function acceptVitest5Separator(config) {
  let pattern = config.testNamePattern
  Object.defineProperty(config, 'testNamePattern', {
    configurable: true,
    enumerable: true,
    get: () => pattern,
    set: (value) => {
      pattern = value instanceof RegExp ? new RegExp(value.source.replaceAll(' ', '(?: | > )'), value.flags) : value
    },
  })
}

function createVitest5TestRunner(injector) {
  const runner = upstream.factory(injector)
  const init = runner.init.bind(runner)
  runner.init = async () => {
    await init()
    for (const project of runner.ctx.projects) acceptVitest5Separator(project.config)
  }
  const mutantRun = runner.mutantRun.bind(runner)
  runner.mutantRun = async (options) => {
    const result = await mutantRun(options)
    if (result.status !== MutantRunStatus.Survived) return result
    const failed = runner.ctx.state.getFiles().find((file) => file.result?.state === 'fail')
    if (!failed) return result
    const why = failed.result.errors?.[0]?.message ?? 'the file failed'
    return { status: MutantRunStatus.Killed, failureMessage: `${failed.name}: ${why}`, killedBy: [], nrOfTests: result.nrOfTests }
  }
  return runner
}
createVitest5TestRunner.inject = tokens(commonTokens.injector)

export const strykerPlugins = [declareFactoryPlugin(PluginKind.TestRunner, 'vitest-5', createVitest5TestRunner)]
