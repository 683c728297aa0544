/**
 * DynamoDB item sizes as the adapter stores them, near enough, for the bill
 * (bill.ts): an item's JSON plus its key attributes, and the read and write
 * units a size costs. Sized once where a replay reads the same record often.
 */
import { gzipSync } from 'node:zlib';
import { jsonBytes } from './json-bytes.js';

/** Bytes of an item (or of the items of a query) as DynamoDB sizes them, near enough: JSON plus key attributes. */
export function itemBytes(item: unknown): number {
  if (item === undefined || item === null) return 0;
  if (Array.isArray(item)) return item.reduce((sum: number, one) => sum + itemBytes(one), 0);
  const record = item as { node?: unknown; record?: unknown };
  // putNodeStats and claimScaleUp answer with a wrapper around the item.
  if (typeof item === 'object' && record.node !== undefined && Object.keys(item).length <= 2) return itemBytes(record.node);
  if (typeof item === 'object' && record.record !== undefined && Object.keys(item).length <= 2) return itemBytes(record.record);
  return jsonBytes(item) + 100;
}

export const readUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));
export const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** Bytes of a node as the adapter stores it: the node item, its stats item (0 without stats), its gear list's item (0 without one). */
export interface NodeItemBytes {
  node: number;
  stats: number;
  list: number;
}

/** Stats as the meter reads them. */
export interface StatsLike {
  gears?: unknown[];
  listed?: { digest: string };
}

/**
 * The gear list's item as the adapter writes it (lib/adapters/dynamodb/node-stats.ts): gzipped JSON, its digest and
 * times. Gzipping every list a replay writes was a sixth of its time: one list in GZIP_SAMPLE is gzipped, and the
 * others are sized at that list's ratio to its JSON (lists of one replay are alike; a unit is 1 KB, the ratio moves
 * a list's size by a few bytes). Each list is sized once, by its digest, however often it is written or read.
 */
export class GearListSizes {
  private readonly byDigest = new Map<string, number>();
  private sized = 0;
  private ratio = 1;

  of(stats: StatsLike): number {
    const digest = stats.listed?.digest ?? '';
    let bytes = this.byDigest.get(digest);
    if (bytes === undefined) {
      const raw = jsonBytes(stats.gears ?? []);
      if (this.sized++ % GZIP_SAMPLE === 0) this.ratio = gzipSync(JSON.stringify(stats.gears ?? [])).length / Math.max(1, raw);
      bytes = Math.ceil(raw * this.ratio);
      if (this.byDigest.size >= 50_000) this.byDigest.clear();
      if (digest) this.byDigest.set(digest, bytes);
    }
    return bytes + 150;
  }
}

const GZIP_SAMPLE = 64;

/**
 * Sizes nodes as the adapter stores them. A stats report rewrites a node's
 * stats item only, so its node item is sized once per version (every other
 * write of a node bumps it: StateStore's contract) and its stats once per
 * report (the stored stats are one frozen object until the next): sizing each
 * listed node afresh on every read was a tenth of a big replay.
 */
export class NodeSizes {
  /** By node id: the size of its item at a version (and creation, should an id ever be created again). */
  private readonly nodeItems = new Map<string, { version: unknown; createdAt: unknown; bytes: number }>();
  /** A stored record is read many times before its next write: sized once. */
  private readonly records = new WeakMap<object, NodeItemBytes>();

  constructor(private readonly listSizes: GearListSizes) {}

  of(item: unknown): NodeItemBytes {
    const record = (item as { node?: unknown } | undefined)?.node ?? item;
    if (!record || typeof record !== 'object') return { node: 0, stats: 0, list: 0 };
    const known = this.records.get(record);
    if (known) return known;
    const { stats, ...node } = record as { stats?: StatsLike; nodeId?: unknown; version?: unknown; createdAt?: unknown };
    const sizes = {
      node: this.nodeItem(node),
      stats: stats === undefined ? 0 : statsItemBytes(stats.gears ? { ...stats, gears: undefined } : stats),
      list: stats?.gears && stats.listed ? this.listSizes.of(stats) : 0,
    };
    if (Object.isFrozen(record)) this.records.set(record, sizes);
    return sizes;
  }

  private nodeItem(node: { nodeId?: unknown; version?: unknown; createdAt?: unknown }): number {
    if (typeof node.nodeId !== 'string' || node.version === undefined) return itemBytes(node);
    const known = this.nodeItems.get(node.nodeId);
    if (known?.version === node.version && known.createdAt === node.createdAt) return known.bytes;
    const bytes = itemBytes(node);
    this.nodeItems.set(node.nodeId, { version: node.version, createdAt: node.createdAt, bytes });
    return bytes;
  }
}

/**
 * `itemBytes(drain)`, from its header's JSON and each move's (a stored move is one frozen object until it changes, so
 * sized once): a drain is read at every step of its moves, and sizing its hundred moves afresh each time was a
 * fiftieth of a big replay. `"moves":[` ... `]` and the commas are counted as JSON.stringify writes them.
 */
export function drainBytes(drain: unknown): number {
  const { moves, ...header } = (drain ?? {}) as { moves?: unknown };
  if (!drain || typeof drain !== 'object' || !Array.isArray(moves) || moves.some((move) => move === null || typeof move !== 'object')) return itemBytes(drain);
  const headerBytes = jsonBytes(header);
  const movesBytes = moves.reduce<number>((sum, move) => sum + jsonBytes(move), 0) + Math.max(0, moves.length - 1) + 2;
  const comma = headerBytes > 2 ? 1 : 0;
  return headerBytes + comma + '"moves":'.length + movesBytes + 100;
}

/** The prior report kept beside the stats (`"priorGears":NNN,"priorAt":"<24-character ISO time>",`). */
const PRIOR_BYTES = 50;

/**
 * `itemBytes({ stats })`, from the stats' own (cached when frozen) JSON: `{"stats":` and `}` are 10 bytes; its prior
 * beside them (in the JSON already when the stats were read, which carry it).
 */
export function statsItemBytes(stats: unknown): number {
  const prior = (stats as { prior?: unknown } | null)?.prior === undefined ? PRIOR_BYTES : 0;
  return jsonBytes(stats) + 10 + prior + 100;
}

/** Whether the item is one the byPool index holds (its writes cost twice). */
export function hasPool(item: unknown): boolean {
  if (!item || typeof item !== 'object') return false;
  const record = item as { pool?: unknown; node?: { pool?: unknown }; record?: { pool?: unknown } };
  return record.pool !== undefined || record.node?.pool !== undefined || record.record?.pool !== undefined;
}
