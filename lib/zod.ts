/**
 * The zod the configuration schema (lib/config/schema.ts) and the CLI's
 * environment are written with: `zod/mini`, with zod's English messages.
 * What a Lambda function validates at cold start, its deployment settings
 * (lib/config/load.ts) and its messages (lib/messages/), is plain code, which
 * builds in a fraction of the time: see docs/BENCHMARKS.md, "Cold start".
 *
 * Why mini: classic zod (`import { z } from 'zod'`) is about 200 KiB
 * minified and builds every schema with its method set; `zod/mini` is the
 * same validator core (same issues, same messages) with plain functions in
 * place of methods, so a bundle keeps only what the schemas use and builds
 * each schema faster.
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
