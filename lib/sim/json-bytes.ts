/**
 * The UTF-8 bytes of `JSON.stringify(value)`, counted without writing the
 * text. The bill sizes every record the replay writes (a pool's demand
 * history of some 200 samples each minute, every decision, every stats
 * report); stringifying them was 7 % of a 2,000-gear replay's CPU, and V8
 * writes nested arrays of numbers slowly. Anything the walk does not count
 * exactly (a `toJSON`, a string needing escapes, a boxed primitive, a very
 * deep value) is stringified as before.
 */
export function jsonBytes(value: unknown): number {
  mutableBelow = false;
  return valueBytes(value, 0) ?? Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** Deeper than any record the store holds: past it (a cycle, say) JSON.stringify says what is wrong. */
const MAX_DEPTH = 64;

/** Bytes of `value` as JSON.stringify writes it; undefined when the walk cannot count it exactly. */
function valueBytes(value: unknown, depth: number): number | undefined {
  switch (typeof value) {
    case 'number':
      return numberBytes(value);
    case 'string':
      return stringBytes(value);
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      if (value === null) return 4;
      if (depth >= MAX_DEPTH) return undefined;
      return compositeBytes(value, depth);
    default:
      return undefined;
  }
}

/**
 * The store hands out deeply frozen records, and a record rebuilt from one shares its frozen parts (a pool's history
 * keeps all but its newest samples, a drain all but the moves that changed): a subtree frozen throughout cannot change
 * (its fields are data; the store's records have no accessors), so it is counted once. `mutableBelow` says whether the walk met an object not frozen under the one being counted.
 */
const frozenBytes = new WeakMap<object, number>();
let mutableBelow = false;

function compositeBytes(value: object, depth: number): number | undefined {
  const frozen = Object.isFrozen(value);
  if (frozen) {
    const known = frozenBytes.get(value);
    if (known !== undefined) return known;
  }
  const outer = mutableBelow;
  mutableBelow = false;
  const bytes = Array.isArray(value) ? arrayBytes(value, depth + 1) : objectBytes(value as Record<string, unknown>, depth + 1);
  if (frozen && !mutableBelow && bytes !== undefined) frozenBytes.set(value, bytes);
  mutableBelow = outer || mutableBelow || !frozen;
  return bytes;
}

function arrayBytes(array: readonly unknown[], depth: number): number | undefined {
  let bytes = 2 + Math.max(0, array.length - 1);
  for (let i = 0; i < array.length; i++) {
    const element = array[i];
    // Where an object drops a property, an array writes null.
    const one = isOmitted(element) ? 4 : valueBytes(element, depth);
    if (one === undefined) return undefined;
    bytes += one;
  }
  return bytes;
}

function objectBytes(object: Record<string, unknown>, depth: number): number | undefined {
  const prototype = Object.getPrototypeOf(object);
  // A Date, a boxed number, a Map: JSON.stringify has its own rules for them.
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  if (typeof object.toJSON === 'function') return undefined;
  let bytes = 2;
  let written = 0;
  for (const key in object) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    const field = object[key];
    if (isOmitted(field)) continue;
    const fieldBytes = valueBytes(field, depth);
    if (fieldBytes === undefined) return undefined;
    bytes += stringBytes(key) + 1 + fieldBytes + (written > 0 ? 1 : 0);
    written++;
  }
  return bytes;
}

function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

function numberBytes(value: number): number {
  if (!Number.isFinite(value)) return 4; // null
  if (Number.isInteger(value) && value > -1e15 && value < 1e15) {
    let digits = value < 0 ? 2 : 1;
    for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) digits++;
    return digits;
  }
  return String(value).length;
}

/** Printable ASCII other than `"` and `\` is written as it is; anything else is left to JSON.stringify. */
function stringBytes(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return Buffer.byteLength(JSON.stringify(text));
  }
  return text.length + 2;
}
