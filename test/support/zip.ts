import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/**
 * The files of a zip archive (stored or deflated entries, no zip64): enough to
 * read the Lambda artifacts `serverless package` writes, without a dependency.
 */
export function readZip(file: string): Map<string, Buffer> {
  const zip = readFileSync(file);
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error(`${file}: not a zip archive`);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory entry ${n}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localHeader = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    if (!name.endsWith('/')) {
      if (method === 0) files.set(name, Buffer.from(data));
      else if (method === 8) files.set(name, inflateRawSync(data));
      else throw new Error(`${file}: ${name} uses compression method ${method}`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}
