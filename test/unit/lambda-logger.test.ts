import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, JsonLogger, type LineWriter } from '../../lib/adapters/lambda/logger.js';
import { lambdaContext } from '../support/sqs-events.js';

type Line = Record<string, unknown>;

/** A writer that keeps each line, parsed, with the stream it went to. */
function lines() {
  const written: Array<{ stream: 'out' | 'err'; line: Line }> = [];
  const write: LineWriter = (stream, text) => {
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    written.push({ stream, line: JSON.parse(text) as Line });
  };
  return { written, write };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('JsonLogger', () => {
  it('writes one JSON object per line with level, message, timestamp, service and the attributes given', () => {
    const out = lines();
    const logger = createLogger('gear-mover', 'DEBUG', out.write);
    logger.debug('planning', { nodeId: 'node-3.example.com' });
    logger.info('planned', { gears: 3 });
    expect(out.written.map((w) => w.line)).toMatchObject([
      { level: 'DEBUG', message: 'planning', service: 'gear-mover', nodeId: 'node-3.example.com' },
      { level: 'INFO', message: 'planned', service: 'gear-mover', gears: 3 },
    ]);
    expect(Date.parse(out.written[0]!.line.timestamp as string)).not.toBeNaN();
  });

  it('honours the level it is given, and SILENT writes nothing', () => {
    const out = lines();
    const warn = createLogger('gear-mover', 'WARN', out.write);
    warn.debug('hidden');
    warn.info('hidden');
    warn.warn('shown');
    warn.error('shown too');
    expect(out.written.map((w) => w.line.message)).toEqual(['shown', 'shown too']);
    const silent = createLogger('gear-mover', 'SILENT', out.write);
    silent.error('never');
    expect(out.written).toHaveLength(2);
  });

  it('sends WARN and ERROR to stderr, the rest to stdout', () => {
    const out = lines();
    const logger = createLogger('gear-mover', 'DEBUG', out.write);
    logger.debug('a');
    logger.info('b');
    logger.warn('c');
    logger.error('d');
    expect(out.written.map((w) => w.stream)).toEqual(['out', 'out', 'err', 'err']);
  });

  it('writes to the process streams by default', () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const logger = createLogger('gear-mover');
    logger.info('to stdout');
    logger.error('to stderr');
    expect(JSON.parse(String(stdout.mock.calls[0]![0]))).toMatchObject({ level: 'INFO', message: 'to stdout' });
    expect(JSON.parse(String(stderr.mock.calls[0]![0]))).toMatchObject({ level: 'ERROR', message: 'to stderr' });
  });

  it('adds the invocation keys after addContext; cold_start is true for the first invocation only', () => {
    const out = lines();
    const logger = createLogger('gear-mover', 'INFO', out.write);
    logger.info('at load');
    const first = lambdaContext({ functionName: 'nodescaler-prod-gearMover', memoryMb: 256 });
    logger.addContext(first);
    logger.info('first');
    const second = lambdaContext({ functionName: 'nodescaler-prod-gearMover', memoryMb: 256 });
    logger.addContext(second);
    logger.info('second');
    const [atLoad, one, two] = out.written.map((w) => w.line);
    expect(atLoad).not.toHaveProperty('function_request_id');
    expect(one).toMatchObject({
      cold_start: true,
      function_arn: first.invokedFunctionArn,
      function_memory_size: '256',
      function_name: 'nodescaler-prod-gearMover',
      function_request_id: first.awsRequestId,
    });
    expect(two).toMatchObject({ cold_start: false, function_request_id: second.awsRequestId });
  });

  it('writes errors with name, location, message, stack and cause, bigints as text, and cycles as [Circular]', () => {
    const out = lines();
    const logger = createLogger('gear-mover', 'INFO', out.write);
    const cause = new RangeError('socket hung up');
    const error = Object.assign(new Error('send failed', { cause }), { code: 'ECONNRESET' });
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const shared = { id: 1 };
    logger.error('failed', { error, big: 12345678901234567890n, cyclic, pair: [shared, shared], ids: new Set(['a', 'b']), by: new Map([['x', 1]]) });
    const line = out.written[0]!.line;
    expect(line.error).toMatchObject({ name: 'Error', message: 'send failed', code: 'ECONNRESET', cause: { name: 'RangeError', message: 'socket hung up' } });
    // The first frame with a parenthesised place, as Powertools reads it.
    expect((line.error as Line).location).toMatch(/^\S+:\d+$/);
    expect((line.error as Line).stack).toContain('send failed');
    expect(line.big).toBe('12345678901234567890');
    expect(line.cyclic).toEqual({ name: 'loop', self: '[Circular]' });
    expect(line.pair).toEqual([{ id: 1 }, { id: 1 }]);
    expect(line.ids).toEqual(['a', 'b']);
    expect(line.by).toEqual({ x: 1 });
  });

  it('an error that is its own cause is written once', () => {
    const out = lines();
    const error = new Error('loop');
    (error as { cause?: unknown }).cause = error;
    createLogger('gear-mover', 'INFO', out.write).error('failed', { error });
    expect((out.written[0]!.line.error as Line).cause).toBe('[Circular]');
  });

  it('never throws: an attribute JSON cannot write leaves the line without attributes, a failing stream loses the line', () => {
    const out = lines();
    const logger = createLogger('gear-mover', 'INFO', out.write);
    const hostile = {
      toJSON() {
        throw new Error('no');
      },
    };
    expect(() => logger.warn('still written', { hostile })).not.toThrow();
    expect(out.written[0]!.line).toMatchObject({ level: 'WARN', message: 'still written', attributes_unwritable: 'Error: no' });
    const broken = new JsonLogger('gear-mover', 'INFO', () => {
      throw new Error('EPIPE');
    });
    expect(() => broken.error('lost')).not.toThrow();
  });

  it('its methods work unbound, as callbacks', () => {
    const out = lines();
    const { warn } = createLogger('gear-mover', 'INFO', out.write);
    warn('passed along');
    expect(out.written[0]!.line).toMatchObject({ message: 'passed along', service: 'gear-mover' });
  });

  it('writes the keys the Powertools Logger it replaced wrote, with the same values', () => {
    // Both write through process.stdout/stderr: ours by default, Powertools through its own console.
    vi.stubEnv('POWERTOOLS_DEV', '');
    vi.stubEnv('AWS_LAMBDA_LOG_LEVEL', '');
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const captured: string[] = [];
    const grab = ((chunk: string | Uint8Array) => {
      captured.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    vi.spyOn(process.stdout, 'write').mockImplementation(grab);
    vi.spyOn(process.stderr, 'write').mockImplementation(grab);
    const context = lambdaContext({ functionName: 'nodescaler-prod-thresholdEvaluator' });
    const powertools = new PowertoolsLogger({ serviceName: 'thresholdEvaluator', logLevel: 'DEBUG' });
    const ours = createLogger('thresholdEvaluator', 'DEBUG');
    for (const logger of [powertools, ours]) {
      logger.addContext(context);
      logger.info('decided', { pool: 'd1/small', decisionId: 'd-1', nodes: 3 });
      logger.error('failed', { error: new Error('throttled') });
    }
    vi.restoreAllMocks();
    const parsed = captured.join('').trim().split('\n').map((text) => JSON.parse(text) as Line);
    expect(parsed).toHaveLength(4);
    // Powertools also writes sampling_rate 0 (it samples nothing here) and an X-Ray trace id when there is one.
    const comparable = ({ timestamp, sampling_rate, xray_trace_id, ...rest }: Line) => {
      expect(typeof timestamp).toBe('string');
      void sampling_rate;
      void xray_trace_id;
      const error = rest.error as Line | undefined;
      return error ? { ...rest, error: { ...error, stack: typeof error.stack, location: typeof error.location } } : rest;
    };
    const [ptInfo, ptError, ourInfo, ourError] = parsed.map(comparable);
    expect(ourInfo).toEqual(ptInfo);
    expect(ourError).toEqual(ptError);
    expect(Object.keys(ourInfo!)).toEqual(Object.keys(ptInfo!));
  });
});
