// One line on what the reliability suite tried (test/reliability/support/tally.ts writes the figures).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function printReliabilityTally(dir) {
  if (!existsSync(dir)) return;
  const tallies = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')));
  if (tallies.length === 0) return;
  const sum = (key, list = tallies) => list.reduce((total, tally) => total + (tally[key] ?? 0), 0);
  const on = (platform) => tallies.filter((tally) => (tally.platform ?? 'simulated') === platform);
  const platforms = `${sum('scenarios', on('simulated'))} on the simulated platform, ${sum('scenarios', on('broker'))} on the broker emulator`;
  console.log(
    `reliability: ${sum('scenarios')} generated scenarios (${platforms}), ${sum('malformedInputs')} malformed inputs, ` +
      `${sum('hostileMessages')} hostile messages, ${sum('violations')} invariant violations`,
  );
}
