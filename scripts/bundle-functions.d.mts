import type { BuildOptions } from 'esbuild';

export interface BuiltFunction {
  bundle: string;
  bytes: number;
  meta: string;
  clients: string[];
  /** The SDK commands the bundle holds, by package. */
  commands: Record<string, string[]>;
  /** The clients and those commands, alone. */
  bare: string;
  bareBytes: number;
  /** The clients alone. */
  bareClients: string;
  bareClientsBytes: number;
}

/** The esbuild options of infra/esbuild.yml, with the plugins of infra/esbuild-plugins.cjs (the stage plugins with `configFile`). */
export function esbuildOptions(stage?: { configFile?: string }): BuildOptions;
export function bundleFunctions(outDir: string, entries: Record<string, string>, stage?: { configFile?: string }): Promise<Record<string, BuiltFunction>>;
