/**
 * Decoding an SQS body: size limit first, then JSON, with the position of a
 * syntax error reported the same way whatever the Node.js version (V8's own
 * messages differ between versions and do not always carry a position).
 */
import type { ValidationIssue } from '../errors.js';

/** The SQS message size limit this system is configured for: 256 KiB. */
export const MAX_BODY_BYTES = 256 * 1024;

export type DecodedBody = { ok: true; value: unknown } | { ok: false; issue: ValidationIssue };

/** The size of a body as SQS counts it: UTF-8 bytes. */
export function bodyBytes(body: string): number {
  return Buffer.byteLength(body, 'utf8');
}

export function oversizeIssue(bytes: number): ValidationIssue {
  return {
    path: 'body',
    message: `message body is ${bytes} bytes, over the SQS limit of ${MAX_BODY_BYTES} bytes (256 KiB)`,
  };
}

export function decodeBody(body: string): DecodedBody {
  const bytes = bodyBytes(body);
  if (bytes > MAX_BODY_BYTES) return { ok: false, issue: oversizeIssue(bytes) };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, issue: jsonIssue(body, error) };
  }
}

function jsonIssue(body: string, error: unknown): ValidationIssue {
  const found = locateJsonError(body);
  if (found === undefined) {
    const detail = error instanceof Error ? error.message : 'cannot parse';
    return { path: 'body', message: `invalid JSON: ${detail}` };
  }
  const { line, column } = lineAndColumn(body, found.position);
  const from = Math.max(0, found.position - 20);
  const near = body.slice(from, found.position + 20);
  return {
    path: 'body',
    message: `invalid JSON at position ${found.position} (line ${line}, column ${column}): ${found.reason}`,
    value: near,
  };
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

const OBJECT = 0;
const ARRAY = 1;

type Expect = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'after-value';

/**
 * Where the first syntax error of `text` is (RFC 8259), or undefined when it is
 * valid JSON. Iterative, so any nesting depth is fine; linear in the length.
 */
export function locateJsonError(text: string): { position: number; reason: string } | undefined {
  const n = text.length;
  const stack: number[] = [];
  let i = 0;
  let expect: Expect = 'value';

  const code = (at: number): number => (at < n ? text.charCodeAt(at) : -1);
  const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
  const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
  const fail = (what: string): { position: number; reason: string } => ({
    position: i,
    reason: i >= n ? `${what}, got the end of the input` : `${what}, got ${JSON.stringify(text[i])}`,
  });

  /** At an opening quote: moves past the closing one, or returns the problem. */
  const scanString = (): { position: number; reason: string } | undefined => {
    i++;
    for (;;) {
      const c = code(i);
      if (c === -1) return fail('unterminated string: expected \'"\'');
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('control character in string (must be escaped)');
      if (c !== 0x5c) {
        i++;
        continue;
      }
      i++;
      const e = code(i);
      if (e === 0x75) {
        i++;
        for (let k = 0; k < 4; k++, i++) if (!isHex(code(i))) return fail('expected 4 hex digits after \\u');
      } else if ('"\\/bfnrt'.includes(text[i] ?? '\u0000') && e !== -1) {
        i++;
      } else {
        return fail('invalid escape in string');
      }
    }
  };

  const scanDigits = (what: string): { position: number; reason: string } | undefined => {
    if (!isDigit(code(i))) return fail(what);
    while (isDigit(code(i))) i++;
    return undefined;
  };

  const scanNumber = (): { position: number; reason: string } | undefined => {
    if (code(i) === 0x2d) i++;
    if (code(i) === 0x30) i++;
    else {
      const problem = scanDigits('expected a digit');
      if (problem) return problem;
    }
    if (code(i) === 0x2e) {
      i++;
      const problem = scanDigits('expected a digit after the decimal point');
      if (problem) return problem;
    }
    if (code(i) === 0x65 || code(i) === 0x45) {
      i++;
      if (code(i) === 0x2b || code(i) === 0x2d) i++;
      const problem = scanDigits('expected a digit in the exponent');
      if (problem) return problem;
    }
    return undefined;
  };

  const scanWord = (word: string): { position: number; reason: string } | undefined => {
    for (let k = 0; k < word.length; k++, i++) {
      if (text[i] !== word[k]) return fail(`expected ${JSON.stringify(word)}`);
    }
    return undefined;
  };

  for (;;) {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i++;
    }
    const c = code(i);
    const top = stack[stack.length - 1];
    let problem: { position: number; reason: string } | undefined;
    switch (expect) {
      case 'after-value':
        if (top === undefined) return i < n ? fail('unexpected data after the JSON value') : undefined;
        if (c === 0x2c) {
          i++;
          expect = top === OBJECT ? 'key' : 'value';
        } else if ((top === OBJECT && c === 0x7d) || (top === ARRAY && c === 0x5d)) {
          i++;
          stack.pop();
        } else {
          return fail(top === OBJECT ? "expected ',' or '}'" : "expected ',' or ']'");
        }
        continue;
      case 'key-or-close':
      case 'key':
        if (expect === 'key-or-close' && c === 0x7d) {
          i++;
          stack.pop();
          expect = 'after-value';
          continue;
        }
        if (c !== 0x22) return fail('expected a property name in double quotes');
        problem = scanString();
        if (problem) return problem;
        expect = 'colon';
        continue;
      case 'colon':
        if (c !== 0x3a) return fail("expected ':' after the property name");
        i++;
        expect = 'value';
        continue;
      case 'value-or-close':
      case 'value':
        if (expect === 'value-or-close' && c === 0x5d) {
          i++;
          stack.pop();
          expect = 'after-value';
          continue;
        }
        if (c === 0x7b) {
          i++;
          stack.push(OBJECT);
          expect = 'key-or-close';
          continue;
        }
        if (c === 0x5b) {
          i++;
          stack.push(ARRAY);
          expect = 'value-or-close';
          continue;
        }
        if (c === 0x22) problem = scanString();
        else if (c === 0x2d || isDigit(c)) problem = scanNumber();
        else if (c === 0x74) problem = scanWord('true');
        else if (c === 0x66) problem = scanWord('false');
        else if (c === 0x6e) problem = scanWord('null');
        else return fail('expected a JSON value');
        if (problem) return problem;
        expect = 'after-value';
        continue;
    }
  }
}
