/**
 * What the broker's admin tools print, read as outcomes. The messages are
 * OpenShift Origin's (broker-util/oo-admin-ctl-district, oo-admin-move,
 * controller/app/models/district.rb); the framing (EXIT line, filtered dump,
 * query formats) is the nodescaler SSM document's (infra/broker-document.yml).
 */
import type { GearInfo } from '../../domain/model.js';
import { TransientError } from '../../errors.js';
import type { MoveStatus } from '../../ports/platform.js';

/** What a district command's output says, before the adapter acts on it. */
export type DistrictAnswer =
  | { kind: 'done' }
  | { kind: 'already' }
  | { kind: 'not-in-district' }
  | { kind: 'in-a-district' }
  | { kind: 'must-deactivate' }
  | { kind: 'holds-gears'; detail: string }
  | { kind: 'district-not-found'; detail: string }
  | { kind: 'refused'; detail: string }
  | { kind: 'region-refused'; detail: string }
  | { kind: 'has-region'; detail: string }
  | { kind: 'unreachable'; detail: string }
  | { kind: 'unknown'; detail: string };

/** "Error for node 'n': <message>" lines, or the bare error oo-admin-ctl-district prints for a whole-command failure. */
export function classifyDistrictOutput(exitCode: number | undefined, output: string): DistrictAnswer {
  const text = output.replace(/\r/g, '');
  if (exitCode === 0) return { kind: 'done' };
  const detail = firstLine(errorPart(text)) || firstLine(text) || `exit ${exitCode ?? 'unknown'}`;
  if (/is already deactivated|is already active\b/.test(text)) return { kind: 'already' };
  if (/doesn't belong to district/.test(text)) return { kind: 'not-in-district' };
  if (/already belongs to another district/.test(text)) return { kind: 'in-a-district' };
  if (/must be deactivated before it can be removed/.test(text)) return { kind: 'must-deactivate' };
  if (/still using it|still has apps on it/.test(text)) return { kind: 'holds-gears', detail };
  if (/District '[^']*' not found/.test(text) || /Invalid district name/.test(text)) return { kind: 'district-not-found', detail };
  if (/already has gears on it|is of node profile|Cannot add a node with platform/.test(text)) return { kind: 'refused', detail };
  if (/has region: .*unset current region/.test(text)) return { kind: 'has-region', detail };
  if (/(?:Region|Zone) object not found|Invalid (?:region|zone) name|(?:Zone|Region) name is required/.test(text)) return { kind: 'region-refused', detail };
  if (/Cannot connect to node|might be unresponsive|is unresponsive/.test(text)) return { kind: 'unreachable', detail };
  return { kind: 'unknown', detail };
}

/** The `EXIT<TAB>rc` line the document prints last; undefined when the output was cut short before it. */
export function exitCodeOf(stdout: string): number | undefined {
  const match = /(?:^|\n)EXIT\t(\d+)\s*$/.exec(stdout);
  return match ? Number(match[1]) : undefined;
}

function errorPart(text: string): string {
  const at = text.indexOf('ERROR OUTPUT:');
  return at >= 0 ? text.slice(at + 'ERROR OUTPUT:'.length) : '';
}

/** Reasons oo-admin-move gives when the target has no room; the gear is still on its source and may go elsewhere. */
export const TARGET_FULL = /exceeded its capacity|Not enough disk space|uid could not be reserved|max_active_gears|no (?:available|free) (?:uid|slot)/i;

/** oo-admin-move's `--json` report: `{ "<uuid>": { "result": true|false, "message": ..., "destination": ..., "source": ... } }`. */
export interface MoveReport {
  uuid: string;
  result: boolean;
  message?: string;
  destination?: string;
  source?: string;
}

/** The report in the move's output, or undefined when it printed none (crashed, killed, or cut short). */
export function parseMoveReport(stdout: string): MoveReport | undefined {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .pop();
  if (line === undefined) return undefined;
  let report: unknown;
  try {
    report = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (report === null || typeof report !== 'object') return undefined;
  const [uuid, entry] = Object.entries(report as Record<string, unknown>)[0] ?? [];
  if (uuid === undefined || entry === null || typeof entry !== 'object') return undefined;
  const e = entry as Record<string, unknown>;
  return {
    uuid,
    result: e.result === true,
    ...(typeof e.message === 'string' ? { message: e.message } : {}),
    ...(typeof e.destination === 'string' ? { destination: e.destination } : {}),
    ...(typeof e.source === 'string' ? { source: e.source } : {}),
  };
}

/** A failed move as the drain sees it. */
/**
 * origin-server's `Lock.run_in_app_lock`, which every move runs in: after 10 tries 5 s apart it raises
 * LockUnavailableException (171), which oo-admin-move does not rescue, so it ends with no report.
 */
export const APP_BUSY = /Another operation is already running|LockUnavailableException/;

export function failedMove(error: string): MoveStatus {
  if (TARGET_FULL.test(error)) return { state: 'failed', error, targetFull: true };
  if (APP_BUSY.test(error)) return { state: 'failed', error, busy: true };
  return { state: 'failed', error };
}

/** The output of the `node-facts` query: undefined for `UNKNOWN`; a missing or non-integer figure is a TransientError. */
export function parseNodeFacts(nodeId: string, stdout: string): { activeGears: number; maxActiveGears: number } | undefined {
  const lines = stdout.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (lines.includes('UNKNOWN')) return undefined;
  const line = lines.find((l) => l.startsWith('FACTS\t'));
  const fields = line?.split('\t') ?? [];
  const count = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined);
  const activeGears = count(fields[1]);
  const maxActiveGears = count(fields[2]);
  if (activeGears === undefined || maxActiveGears === undefined) {
    throw new TransientError(`node facts of ${nodeId}: the broker did not report gears_active_count and max_active_gears (${JSON.stringify(line ?? firstLine(stdout))})`);
  }
  return { activeGears, maxActiveGears };
}

/** The `node-district` query: the district holding the node, or undefined for `NONE`. */
export function parseNodeDistrict(stdout: string): NodeDistrict | undefined {
  for (const line of stdout.split('\n')) {
    const fields = line.trim().split('\t');
    if (fields[0] === 'NONE') return undefined;
    if (fields[0] === 'DISTRICT' && fields[1]) {
      const answer: NodeDistrict = { district: fields[1], active: fields[2] === 'active' };
      // A region and zone follow since the document placed nodes; '-' (or nothing, from an older document): none.
      if (fields[3] && fields[3] !== '-') answer.region = fields[3];
      if (fields[4] && fields[4] !== '-') answer.zone = fields[4];
      return answer;
    }
  }
  throw new TransientError(`node-district query printed no answer: ${JSON.stringify(firstLine(stdout))}`);
}

/** A node's district as the `node-district` query prints it: `DISTRICT<TAB>name<TAB>active|inactive<TAB>region<TAB>zone`. */
export interface NodeDistrict {
  district: string;
  active: boolean;
  region?: string;
  zone?: string;
}

/** The `gear-location` query: the node holding the gear, or undefined for `NONE`. */
export function parseGearLocation(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    const fields = line.trim().split('\t');
    if (fields[0] === 'NONE') return undefined;
    if (fields[0] === 'AT' && fields[1]) return fields[1];
  }
  throw new TransientError(`gear-location query printed no answer: ${JSON.stringify(firstLine(stdout))}`);
}

/** Parses a `list-gears` page; a page without its end line is a TransientError (cut short). */
export function parseGearListing(stdout: string): { gears: GearInfo[]; next?: number } {
  const gears: GearInfo[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '') continue;
    const fields = line.split('\t');
    if (fields[0] === 'GEAR' && fields.length === 4 && fields[1] && fields[2] && fields[3]) {
      gears.push({ uuid: fields[1], app: fields[2], size: fields[3] });
    } else if (fields[0] === 'NEXT' && /^\d+$/.test(fields[1] ?? '')) {
      return { gears, next: Number(fields[1]) };
    } else if (fields[0] === 'END' && /^\d+$/.test(fields[1] ?? '')) {
      return { gears };
    }
    // Anything else (Rails warnings on stdout) is ignored.
  }
  throw new TransientError('gear listing ended without its END line (output cut short or the script failed)');
}

export function firstLine(text: string): string {
  return (text.split('\n').find((line) => line.trim() !== '') ?? '').trim().slice(0, 300);
}
