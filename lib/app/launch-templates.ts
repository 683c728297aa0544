/**
 * A pool's template with its launch template's `$Latest` or `$Default` read
 * as the version number it stands for now. A node records what it was
 * launched from (lib/domain/drift.ts); `$Latest` reads the same text whatever
 * version EC2 resolves, so without this a new template version never showed
 * as drift, and `$Latest` is the default. The evaluator compares numbers;
 * the provisioner launches the number it read and records it.
 *
 * Read at most once per `FRESH_FOR` per template in a warm function (the
 * evaluator runs every minute and for every stats batch). A failed read
 * leaves the template as written: its nodes' version drift stays unknown
 * (drift.ts never calls a symbolic version drifted) and a launch goes ahead
 * on `$Latest` as before, so a missing permission costs drift, never a node.
 * It is logged, and read again after `RETRY_AFTER`.
 */
import type { NodeTemplate } from '../config/index.js';
import { isSymbolicVersion, launchTemplateKey } from '../domain/drift.js';
import type { PoolRecord } from '../domain/model.js';
import type { Clock } from '../ports/clock.js';
import type { LaunchTemplateVersions } from '../ports/cloud.js';
import type { Log } from '../ports/log.js';

const FRESH_FOR_MS = 5 * 60_000;
const RETRY_AFTER_MS = 60_000;

type Versions = { latest: string; default: string };
type Entry = { readAt: number; versions?: Versions; reading?: Promise<Versions | undefined> };

export class LaunchTemplateResolver {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly source: LaunchTemplateVersions | undefined,
    private readonly ports: { clock: Clock; log: Log },
  ) {}

  /** `template` with a symbolic launch template version replaced by its number, or as written when it cannot be read. */
  async resolve<T extends Pick<NodeTemplate, 'launchTemplate'>>(template: T): Promise<T> {
    const launchTemplate = template.launchTemplate;
    if (!this.source || !launchTemplate || !isSymbolicVersion(launchTemplate.version)) return template;
    const versions = await this.versionsOf(launchTemplate);
    if (!versions) return template;
    const version = launchTemplate.version === '$Default' ? versions.default : versions.latest;
    return { ...template, launchTemplate: { ...launchTemplate, version } };
  }

  private versionsOf(launchTemplate: NonNullable<NodeTemplate['launchTemplate']>): Promise<Versions | undefined> {
    const key = launchTemplate.id ?? `name:${launchTemplate.name}`;
    const now = this.ports.clock.now().getTime();
    const entry = this.entries.get(key);
    if (entry?.reading) return entry.reading;
    if (entry && now - entry.readAt < (entry.versions ? FRESH_FOR_MS : RETRY_AFTER_MS)) return Promise.resolve(entry.versions);
    const reading = this.source!.versionsOf(launchTemplate).then(
      (versions) => {
        this.entries.set(key, { readAt: now, versions });
        return versions;
      },
      (error: unknown) => {
        // The last good read stands until the next one succeeds: a throttled call does not unresolve a pool's template.
        const kept = entry?.versions;
        this.entries.set(key, { readAt: now, ...(kept ? { versions: kept } : {}) });
        this.ports.log.warn('launch template versions not read; drift by template version unknown until they are', {
          launchTemplate: launchTemplate.id ?? launchTemplate.name,
          error: error instanceof Error ? error.message : String(error),
        });
        return kept;
      },
    );
    this.entries.set(key, { readAt: entry?.readAt ?? 0, ...(entry?.versions ? { versions: entry.versions } : {}), reading });
    return reading;
  }
}

/**
 * What the pool record keeps of this evaluation's read (`launchTemplateRead`), when it differs from what it kept:
 * `status`, `explain` and `evaluate --dry-run` read drift with it (lib/cli/snapshot.ts).
 */
export function launchTemplateReadPatch(
  written: Pick<NodeTemplate, 'launchTemplate'>,
  resolved: Pick<NodeTemplate, 'launchTemplate'>,
  pool: Pick<PoolRecord, 'launchTemplateRead'>,
  now: Date,
): Pick<PoolRecord, 'launchTemplateRead'> {
  const before = written.launchTemplate;
  const version = resolved.launchTemplate?.version;
  if (!before || version === undefined || version === before.version) return {};
  const template = launchTemplateKey(before);
  const kept = pool.launchTemplateRead;
  if (kept?.template === template && kept.version === version) return {};
  return { launchTemplateRead: { template, version, readAt: now.toISOString() } };
}
