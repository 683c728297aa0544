import type middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Settings } from '../../config/index.js';
import { ValidationError } from '../../errors.js';
import { parseMessage, prepareSchemas, type ParsedMessage } from '../../messages/index.js';
import type { Clock } from '../../ports/clock.js';
import type { Log } from '../../ports/log.js';
import { createLogger, type LineWriter } from './logger.js';
import { EmfMetrics } from './metrics.js';
import { processSqsBatch, type ParseOutcome } from './sqs-batch.js';

/**
 * What every handler builds once per cold start: its logger (also the `Log` port) and its metrics. `write` takes
 * every line both write (log lines by stream, EMF documents on `out`); tests pass one to keep their output quiet.
 */
export function lambdaRuntime(service: string, settings: Settings, write?: LineWriter) {
  const logger = createLogger(service, settings.deployment.logLevel, write);
  const metrics = new EmfMetrics(service, (error) => logger.warn('metric dropped', { error: String(error) }), write ? (line) => write('out', line) : undefined);
  /** Middy middleware: request id on every log line; metrics flushed after every invocation, failed or not. */
  const observability: middy.MiddlewareObj<unknown, unknown, Error, Context> = {
    before: (request) => {
      logger.addContext(request.context);
    },
    after: () => metrics.flush(),
    onError: () => metrics.flush(),
  };
  const log: Log = logger;
  return { logger, metrics, log, observability };
}

/**
 * A parser for one SQS queue: the body must be a valid message of one of
 * `types`. Their schemas are built here, at cold start, with the rest of what
 * the handler builds once.
 */
export function messageParser<K extends ParsedMessage['type']>(types: readonly K[], clock: Clock) {
  prepareSchemas(types);
  return (body: string): ParseOutcome<Extract<ParsedMessage, { type: K }>> => {
    const parsed = parseMessage(body, { now: clock.now() });
    if (!parsed.ok) return parsed;
    if (!(types as readonly string[]).includes(parsed.message.type)) {
      const error = new ValidationError(
        { path: 'type', message: `this queue takes ${types.join(' or ')} messages`, value: parsed.message.type },
        'misrouted message',
      );
      return { ok: false, error };
    }
    return { ok: true, value: parsed.message as Extract<ParsedMessage, { type: K }> };
  };
}

/** A use case that takes a batch of parsed messages and says which failed (by the id it was given). */
export interface BatchUseCase<T> {
  handleBatch(items: Array<{ id: string; message: T; senderId?: string }>): Promise<{ failures: Array<{ id: string; error: unknown }> }>;
}

/** An SQS batch through a use case: parse each record, hand the good ones over, answer with a partial batch response. */
export function sqsBatch<T>(event: SQSEvent, useCase: BatchUseCase<T>, parse: (body: string) => ParseOutcome<T>, log: Log): Promise<SQSBatchResponse> {
  return processSqsBatch(event, {
    parse,
    handle: async (items) => {
      const { failures } = await useCase.handleBatch(items.map(({ record, value }) => ({ id: record.messageId, message: value, senderId: record.attributes?.SenderId ?? '' })));
      return failures.map(({ id, error }) => ({ messageId: id, error }));
    },
    logger: log,
  });
}
