/**
 * `npm start` loads this first with `node --import`: node keeps V8's compiled code of every module
 * the stack loads (node_modules and the stack's own modules) in a folder, and the next start
 * takes it from there instead of compiling again (node's module compile cache, `os.tmpdir()/
 * node-compile-cache` unless NODE_COMPILE_CACHE names another; keyed by each file's content and
 * node's version, so an edited file is compiled again; NODE_DISABLE_COMPILE_CACHE=1 turns it
 * off). Worker threads inherit `--import` and enable it for their own loader. Measured: npm
 * start's command until /healthz answers, five starts each, alternated: 3.3–4.4 s (median 3.8)
 * and 5.6–7.4 CPU s (6.6) with it, 4.1–4.8 s (4.5) and 7.4–8.2 CPU s (7.9) without
 * (docs/performance.md, "Start-up"). A deployed service starts from an image on a
 * fresh instance, where a cache written at run time would not be found: not used there.
 */
import { enableCompileCache } from 'node:module'

enableCompileCache()
