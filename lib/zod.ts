/**
 * The zod every schema of nodescaler is written with: `zod/mini`, with zod's
 * English messages.
 *
 * Why mini: the configuration and message schemas are built when a Lambda
 * function loads. Classic zod (`import { z } from 'zod'`) is about 200 KiB
 * minified and builds every schema with its method set, 30 to 50 ms of a
 * cold start; `zod/mini` is the same validator core (same issues, same
 * messages) with plain functions in place of methods, so a bundle keeps only
 * what the schemas use (about 30 KiB) and builds each schema faster.
 *
 * Classic zod registers the English messages itself; mini leaves the choice to
 * the application, and without a locale every message would read "Invalid input".
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

// Importers write `import * as z from '../zod.js'`: a namespace import whose
// members are named statically lets esbuild keep only the members used (a
// namespace object passed around as a value would keep all of zod/mini).
export * from 'zod/mini';
