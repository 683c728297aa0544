import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { readConfigFile, type ConfigInput } from '../config/index.js';
import { ValidationError } from '../errors.js';
import type { AppMix } from './disruption.js';
import { peakDemand, type SimPool } from './pools.js';
import { instancePrice } from './prices.js';
import { readTrace, type Trace, type TraceOptions } from './trace.js';

export interface PoolDemand {
  /** `district/profile`. */
  pool: string;
  /** A CSV column of the trace feeding this pool, or a weight of the demand column. */
  column?: string;
  weight?: number;
}

/** `POOL=COLUMN` or `POOL=WEIGHT` (a number), as `--pool-demand` takes it. */
export function parsePoolDemand(text: string): PoolDemand {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1) throw new ValidationError({ path: '--pool-demand', message: 'expected DISTRICT/PROFILE=COLUMN or DISTRICT/PROFILE=WEIGHT', value: text });
  const pool = text.slice(0, at);
  const value = text.slice(at + 1);
  const weight = Number(value);
  if (Number.isFinite(weight)) {
    if (!(weight > 0)) throw new ValidationError({ path: '--pool-demand', message: 'a weight must be > 0', value: text });
    return { pool, weight };
  }
  return { pool, column: value };
}

/**
 * Every pool of a configuration file as the replay runs it: its own
 * gearsPerNode (or `fallbackGearsPerNode`), min, max and first instance type
 * (priced from lib/sim/prices.ts), and its share of the demand. Each pool gets
 * `peakGears` x its share at the peak, share = weight / sum of weights; a pool
 * with its own column gets that column scaled to that peak, the others a
 * share of the trace's demand column. Weights default to each pool's
 * max x gearsPerNode (its size). The handlers run with `handler: ec2` (the
 * simulated cloud) and, where a pool has no template, a simulated one.
 */
export function configPools(options: {
  configFile: string;
  tracePath: string;
  trace: Trace;
  traceOptions: TraceOptions;
  peakGears: number;
  fallbackGearsPerNode: number;
  bootDelaySeconds: number;
  demands: PoolDemand[];
  window?: (trace: Trace) => Trace;
  /** The application mix of every pool without its own in `poolApps` (lib/sim/disruption.ts); unset: the trace's. */
  apps?: AppMix;
  /** Pools with their own application mix (`--pool-apps`): a paid tier whose tenants never idle beside a free tier's. */
  poolApps?: Array<{ pool: string; apps: AppMix }>;
}): { input: ConfigInput; pools: SimPool[] } {
  const parsed = readConfigFile(options.configFile);
  const raw = parseYaml(readFileSync(options.configFile, 'utf8')) as ConfigInput & { pools: Array<Record<string, unknown>> };
  const ids = raw.pools.map((p) => `${String(p.district)}/${String(p.profile)}`);
  for (const demand of options.demands) {
    if (!ids.includes(demand.pool)) throw new ValidationError({ path: '--pool-demand', message: `no such pool in ${options.configFile}; pools: ${ids.join(', ')}`, value: demand.pool });
  }
  for (const own of options.poolApps ?? []) {
    if (!ids.includes(own.pool)) throw new ValidationError({ path: '--pool-apps', message: `no such pool in ${options.configFile}; pools: ${ids.join(', ')}`, value: own.pool });
  }
  const gearsPerNode = (p: Record<string, unknown>) => (typeof p.gearsPerNode === 'number' ? p.gearsPerNode : options.fallbackGearsPerNode);
  const weights = raw.pools.map((p, i) => options.demands.find((d) => d.pool === ids[i])?.weight ?? Number(p.max) * gearsPerNode(p));
  const weightSum = weights.reduce((sum, w) => sum + w, 0);
  const window = options.window ?? ((trace: Trace) => trace);

  const pools: SimPool[] = raw.pools.map((p, i) => {
    const share = weights[i]! / weightSum;
    const poolPeak = Math.max(1, Math.round(options.peakGears * share));
    const column = options.demands.find((d) => d.pool === ids[i])?.column;
    let trace: Trace;
    if (column !== undefined) {
      trace = window(readTrace(options.tracePath, { ...options.traceOptions, demandColumn: column, peakGears: poolPeak }));
    } else {
      const scale = poolPeak / Math.max(1, peakDemand(options.trace));
      trace = { ...options.trace, steps: options.trace.steps.map((s) => ({ at: s.at, demand: Math.round(s.demand * scale) })) };
    }
    const apps = options.poolApps?.find((own) => own.pool === ids[i])?.apps ?? options.apps;
    if (apps) trace = { ...trace, apps };
    const template = (p.template ?? {}) as { instanceTypes?: Array<{ name: string }> };
    const instanceType = template.instanceTypes?.[0]?.name ?? 'm5.xlarge';
    return {
      id: ids[i]!,
      district: String(p.district),
      profile: String(p.profile),
      gearsPerNode: gearsPerNode(p),
      min: typeof p.min === 'number' ? p.min : 0,
      max: Number(p.max),
      instanceType,
      // The price the operator wrote (spot, reserved) is the bill's too, as it is the drains' (lib/domain/node-price.ts).
      pricePerHour: parsed.pools[i]!.nodeHourPrice ?? parsed.scaleDown.payoff.nodeHourPrice ?? instancePrice(instanceType) ?? 0,
      trace,
    };
  });

  const input = {
    ...raw,
    handler: 'ec2',
    scaleUp: { ...(raw.scaleUp ?? {}), forecast: { ...(raw.scaleUp?.forecast ?? {}), bootDelay: `${Math.max(1, options.bootDelaySeconds)}s` } },
    pools: raw.pools.map((p, i) => ({
      ...p,
      gearsPerNode: pools[i]!.gearsPerNode,
      template: {
        imageId: 'ami-sim',
        subnets: ['subnet-sim'],
        instanceTypes: [{ name: pools[i]!.instanceType, vcpus: 4, memoryGiB: 16 }],
        ...((p.template ?? {}) as object),
      },
    })),
  } as ConfigInput;
  return { input, pools };
}
