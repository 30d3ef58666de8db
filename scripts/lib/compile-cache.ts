/**
 * `npm start` loads this first with `node --import`: node keeps V8's compiled code of every module
 * the stack loads (its own TypeScript, stripped, and node_modules) in a folder, and the next start
 * takes it from there instead of compiling again (node's module compile cache, `os.tmpdir()/
 * node-compile-cache` unless NODE_COMPILE_CACHE names another; keyed by each file's content and
 * node's version, so an edited file is compiled again; NODE_DISABLE_COMPILE_CACHE=1 turns it
 * off). Worker threads inherit `--import` and enable it for their own loader. Measured: a start
 * until /healthz answers took 3.6–3.9 s and 5.6–5.9 CPU s with it, 4.3–5.2 s and 6.8–8.2 CPU s
 * without (docs/performance.md, "Start-up"). A deployed service starts from an image on a
 * fresh instance, where a cache written at run time would not be found: not used there.
 */
import { enableCompileCache } from 'node:module'

enableCompileCache()
