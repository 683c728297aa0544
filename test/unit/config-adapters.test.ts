import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { adaptersOf } from '../../lib/config/adapters.js';
import { parseConfig, type ConfigInput } from '../../lib/config/index.js';

const require = createRequire(import.meta.url);
const { launchScopes } = require('../../infra/launch-scopes.cjs') as { launchScopes: (config: unknown) => { launchTemplateVersions: string } };

const raw = (template: Record<string, unknown>, handler = 'ec2') => ({
  handler,
  pools: [{ district: 'd1', profile: 'small', max: 5, template: { instanceTypes: [{ name: 'm5.xlarge', vcpus: 4, memoryGiB: 16 }], subnets: ['subnet-0123456789abcdef0'], ...template } }],
});

describe('which adapters read launch template versions (lib/config/adapters.ts, and the same rule for IAM in infra/launch-scopes.cjs)', () => {
  it('handler ec2 with a launch template at $Latest (also when no version is written) or $Default; not a number, an AMI alone, or another handler', () => {
    const cases: Array<[Record<string, unknown>, string, boolean]> = [
      [{ launchTemplate: { id: 'lt-0123456789abcdef0' } }, 'ec2', true],
      [{ launchTemplate: { name: 'nodes', version: '$Default' } }, 'ec2', true],
      [{ launchTemplate: { id: 'lt-0123456789abcdef0', version: 4 } }, 'ec2', false],
      [{ imageId: 'ami-0123456789abcdef0' }, 'ec2', false],
      [{ launchTemplate: { id: 'lt-0123456789abcdef0' } }, 'log', false],
    ];
    for (const [template, handler, reads] of cases) {
      const input = raw(template, handler);
      expect(adaptersOf(parseConfig(input as ConfigInput)).launchTemplateVersions, JSON.stringify(input)).toBe(reads);
      expect(launchScopes(input).launchTemplateVersions, JSON.stringify(input)).toBe(reads ? 'true' : '');
    }
  });
});
