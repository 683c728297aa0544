/**
 * Cross-field rules that keep a configuration from contradicting itself or
 * the platform it drives (schema.ts runs them with its own; they read the raw
 * value through guards and stay silent about a field that has its own issue),
 * and the rule only a deployment needs (`deploymentIssues`: validate-config
 * and packaging).
 */
import type { ValidationIssue } from '../errors.js';
import type { Config } from './schema.js';

type Path = (string | number)[];
/** Reports an issue at a path (the value found there is shown with it). */
type Report = (path: Path, message: string) => void;

/** The names the broker adapter sends (lib/adapters/platform/openshift-broker.ts, the SSM document's patterns). */
const NODE_NAME = /^[a-z0-9._-]{1,253}$/;
const DISTRICT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** An EC2 instance or SSM managed-instance id: one host, never a wildcard. */
const INSTANCE_ID = /^(?:i|mi)-[0-9a-f]{1,17}$/;

const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

export function consistencyChecks(value: unknown, report: Report): void {
  const root = record(value);
  if (!root) return;
  const platform = record(root.platform);
  const broker = str(platform?.kind) === 'openshift-broker';

  const instance = str(platform?.brokerInstanceId);
  if (instance !== undefined && !INSTANCE_ID.test(instance)) {
    report(['platform', 'brokerInstanceId'], 'must be one instance id such as i-0123456789abcdef0 (SSM commands, and the permission to send them, are scoped to it)');
  }

  // Names the broker would refuse: a pool whose district it cannot name never joins or drains a node.
  list(root.pools).forEach((entry, index) => {
    const pool = record(entry);
    for (const key of ['district', 'profile'] as const) {
      const name = str(pool?.[key]);
      if (name !== undefined && name !== '' && !name.includes('/') && !DISTRICT_NAME.test(name)) {
        report(['pools', index, key], 'must be 1 to 64 letters, digits, ".", "_" or "-" (the names oo-admin-ctl-district accepts)');
      }
    }
  });

  protectedNodeChecks(root, report);

  // Durations that contradict each other.
  const leaseTtl = positive(root.leaseTtl);
  const provision = positive(record(root.scaleUp)?.maxNodeProvisionTime);
  if (leaseTtl !== undefined && provision !== undefined && leaseTtl < provision) {
    report(
      ['leaseTtl'],
      `must not be shorter than scaleUp.maxNodeProvisionTime (${duration(provision)}): the pool's lease would run out while its new nodes may still join, and the pool decide again on capacity already on its way`,
    );
  }
  const drainTimeout = positive(record(root.scaleDown)?.drainTimeout);
  const oneMove = broker ? positive(platform?.commandTimeout) : positive(platform?.moveDuration);
  if (drainTimeout !== undefined && oneMove !== undefined && drainTimeout < oneMove) {
    const what = broker ? 'platform.commandTimeout, the longest one gear move may run' : 'platform.moveDuration, one gear move';
    report(['scaleDown', 'drainTimeout'], `must not be shorter than ${what} (${duration(oneMove)}): every drain would time out before its first move could end`);
  }
}

/** Node ids are `<base>-<N>.<domain>` in lower case (lib/domain/provisioning.ts nodeNames); a protected entry must be one. */
function protectedNodeChecks(root: Record<string, unknown>, report: Report): void {
  const fallback = record(root.naming);
  list(root.pools).forEach((entry, poolIndex) => {
    const pool = record(entry);
    const own = record(pool?.naming);
    const naming = { base: str(own?.base) ?? str(fallback?.base) ?? 'node', domain: (str(own?.domain) ?? str(fallback?.domain) ?? 'example.com').toLowerCase() };
    list(pool?.protectedNodes).forEach((item, index) => {
      const name = str(item);
      if (name === undefined || name === '') return;
      const at = ['pools', poolIndex, 'protectedNodes', index];
      const cleaned = name.trim().toLowerCase();
      if (cleaned !== name || !NODE_NAME.test(name)) {
        const hint = NODE_NAME.test(cleaned) ? `; did you mean ${JSON.stringify(fullName(cleaned, naming) ?? cleaned)}?` : '';
        report(at, `cannot match a node: node names are lower-case host names without spaces (a-z, 0-9, ".", "_", "-")${hint}`);
        return;
      }
      const full = fullName(name, naming);
      if (full !== undefined && full !== name) report(at, `cannot match a node: node names are full host names; did you mean ${JSON.stringify(full)}?`);
    });
  });
}

/** The node id a short name stands for: `<base>-<N>` or the cloud name `<base>_<N>` of a configured naming. */
function fullName(name: string, { base, domain }: { base: string; domain: string }): string | undefined {
  if (name.includes('.')) return name;
  const match = new RegExp(`^${base.replace(/[-]/g, '\\-')}[-_]([1-9]\\d*)$`).exec(name);
  return match ? `${base}-${match[1]}.${domain}` : undefined;
}

/**
 * What a deployed stage needs beyond a valid configuration: a stage that
 * launches and terminates real hosts (handler ec2) drives the real platform,
 * never the simulated one, whose empty in-memory districts would let the
 * decommissioner release a host whose node holds gears.
 */
export function deploymentIssues(config: Pick<Config, 'handler' | 'platform'>): ValidationIssue[] {
  if (config.handler === 'ec2' && config.platform.kind !== 'openshift-broker') {
    return [
      {
        path: 'platform.kind',
        message:
          'handler ec2 launches and terminates real hosts: it needs the real platform (platform: { kind: openshift-broker, brokerInstanceId: ... }); the simulated one knows none of their gears',
        value: config.platform.kind,
      },
    ];
  }
  return [];
}
