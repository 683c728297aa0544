import type { BuildOptions } from 'esbuild';

export interface BuiltFunction {
  bundle: string;
  bytes: number;
  meta: string;
  clients: string[];
  bare: string;
  bareBytes: number;
}

/** The esbuild options of infra/esbuild.yml, with the plugins of infra/esbuild-plugins.cjs (the stage plugins with `configFile`). */
export function esbuildOptions(stage?: { configFile?: string }): BuildOptions;
export function bundleFunctions(outDir: string, entries: Record<string, string>, stage?: { configFile?: string }): Promise<Record<string, BuiltFunction>>;
