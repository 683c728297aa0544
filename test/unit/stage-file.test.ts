import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTargetConfig, type TargetSpec } from '../../lib/cli/target.js';
import { stageConfigFile } from '../../lib/config/stage-file.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('stageConfigFile', () => {
  it('takes config/<stage>.<region>.yml when it exists, else config/<stage>.yml', () => {
    const present = new Set(['config/prod.yml', 'config/prod.eu-west-1.yml']);
    const exists = (path: string) => present.has(path);
    expect(stageConfigFile('prod', 'eu-west-1', exists)).toBe('config/prod.eu-west-1.yml');
    expect(stageConfigFile('prod', 'us-east-1', exists)).toBe('config/prod.yml');
    expect(stageConfigFile('prod', undefined, exists)).toBe('config/prod.yml');
  });
});

describe('the CLI against a deployed stage reads the regional file when there is one', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });
  const spec = (region: string): TargetSpec => ({ kind: 'deployed', stage: 'prod', region, tableName: 'nodescaler-prod-state' });

  it('loads config/prod.eu-west-1.yml in eu-west-1 and config/prod.yml elsewhere', () => {
    const root = mkdtempSync(join(tmpdir(), 'nodescaler-stage-file-'));
    roots.push(root);
    mkdirSync(join(root, 'config'));
    copyFileSync(join(ROOT, 'infra/nodescaler.example.yml'), join(root, 'config/prod.yml'));
    copyFileSync(join(ROOT, 'infra/nodescaler.example.yml'), join(root, 'config/prod.eu-west-1.yml'));
    expect(loadTargetConfig(spec('eu-west-1'), root).source).toBe(join(root, 'config/prod.eu-west-1.yml'));
    expect(loadTargetConfig(spec('us-west-2'), root).source).toBe(join(root, 'config/prod.yml'));
  });
});
