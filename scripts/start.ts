/**
 * `npm start`: at this stage, validate the configuration and show the pools
 * nodescaler would watch. (The local runtime replaying a trace comes with its
 * issue.) Usage: npm start -- [--config FILE]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG_FILE, poolNaming, readConfigFile, type Config } from '../lib/config/index.js';
import { formatDuration } from '../lib/domain/duration.js';
import { poolIdOf } from '../lib/domain/model.js';
import { ValidationError } from '../lib/errors.js';

const { values } = parseArgs({ options: { config: { type: 'string', default: DEFAULT_CONFIG_FILE } } });
const file = values.config!;

let config: Config;
try {
  config = readConfigFile(file);
} catch (error) {
  if (error instanceof ValidationError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;
console.log(`nodescaler: configuration ${file} is valid (handler: ${config.handler}, platform: ${config.platform.kind})`);
console.log(
  `scale up at >= ${percent(config.scaleUp.threshold)} for ${formatDuration(config.scaleUp.sustain)} to ${percent(config.scaleUp.target)}; ` +
    `scale down at <= ${percent(config.scaleDown.utilizationThreshold)} for ${formatDuration(config.scaleDown.unneededTime)} ` +
    `(delay after add ${formatDuration(config.scaleDown.delayAfterAdd)}, after delete ${formatDuration(config.scaleDown.delayAfterDelete)}, ` +
    `after failure ${formatDuration(config.scaleDown.delayAfterFailure)}); at most ${config.limits.maxNodesTotal} nodes in all`,
);

const rows = config.pools.map((pool) => {
  const naming = poolNaming(config, pool);
  return {
    pool: poolIdOf(pool.district, pool.profile),
    'min-max': `${pool.min}-${pool.max}`,
    'instance types': pool.template.instanceTypes.map((t) => t.name).join(', ') || '-',
    'cloud name': `${naming.base}_<N>`,
    'host name': `${naming.base}-<N>.${naming.domain}`,
    protected: pool.protectedNodes.length,
  };
});
console.log(`watching ${rows.length} pool${rows.length === 1 ? '' : 's'}:`);
console.table(rows);
