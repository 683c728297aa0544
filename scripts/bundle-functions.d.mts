import type { BuildOptions } from 'esbuild';

export interface BuiltFunction {
  bundle: string;
  bytes: number;
  meta: string;
  clients: string[];
  bare: string;
  bareBytes: number;
}

/** The esbuild options of infra/esbuild.yml, with the plugins of infra/esbuild-plugins.cjs. */
export function esbuildOptions(): BuildOptions;
export function bundleFunctions(outDir: string, entries: Record<string, string>): Promise<Record<string, BuiltFunction>>;
