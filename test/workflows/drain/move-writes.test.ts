/**
 * A drain writes only the moves its plan changed (lib/workflows/drain/move-writes.ts):
 * one create per new gear, one update at the stored version per changed move,
 * one delete per move left out, nothing for a move whose content is the same,
 * whatever object holds it and whatever order its fields were set in.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GearMove } from '../../../lib/domain/model.js';
import { moveWrites, movesAfterWrites } from '../../../lib/workflows/drain/move-writes.js';
import { move } from '../../support/builders.js';

function stored(target: string, uuid: string, version: number, fields: Partial<GearMove> = {}): GearMove {
  return { ...move(target, 'planned', uuid), version, ...fields };
}

describe('moveWrites', () => {
  it('creates a move for a gear that had none, without a version', () => {
    const fresh = move('t1', 'planned', 'g1');
    expect(moveWrites([], [fresh])).toEqual([{ kind: 'create', move: fresh }]);
    expect(moveWrites([], [{ ...fresh, version: 4 }])).toEqual([{ kind: 'create', move: fresh }]);
  });

  it('writes nothing for an unchanged move, the same object or a copy with its fields in another order', () => {
    const held = stored('t1', 'g1', 3, { attempts: 1, startedAt: '2025-03-10T10:00:00.000Z' });
    const reordered: GearMove = { startedAt: held.startedAt, attempts: 1, state: 'planned', target: 't1', gear: { size: 'small', app: 'app', uuid: 'g1' }, version: 3 };
    expect(moveWrites([held], [held])).toEqual([]);
    expect(moveWrites([held], [reordered])).toEqual([]);
    expect(moveWrites([held], [{ ...held, version: 9 }])).toEqual([]);
  });

  it('treats a field set to undefined as a field left out', () => {
    const held = stored('t1', 'g1', 3);
    expect(moveWrites([held], [{ ...held, lastError: undefined, retarget: undefined }])).toEqual([]);
  });

  it('updates a changed move at the version it is stored at', () => {
    const held = stored('t1', 'g1', 3);
    const moving = { ...held, state: 'moving' as const, attempts: 1 };
    const { version: _version, ...written } = moving;
    expect(moveWrites([held], [moving])).toEqual([{ kind: 'update', move: written, expectedVersion: 3 }]);
  });

  it('sees a change inside the gear and a field that appears or goes', () => {
    const held = stored('t1', 'g1', 2, { lastError: 'exit 1' });
    expect(moveWrites([held], [{ ...held, gear: { ...held.gear, doNotMove: true } }])).toHaveLength(1);
    const { lastError: _lastError, ...cleared } = held;
    expect(moveWrites([held], [cleared])).toEqual([{ kind: 'update', move: { ...move('t1', 'planned', 'g1') }, expectedVersion: 2 }]);
    expect(moveWrites([held], [{ ...held, retarget: false }])).toHaveLength(1);
  });

  it('deletes a move left out, at its stored version', () => {
    const kept = stored('t1', 'g1', 1);
    const dropped = stored('t2', 'g2', 5);
    expect(moveWrites([kept, dropped], [kept])).toEqual([{ kind: 'delete', uuid: 'g2', expectedVersion: 5 }]);
  });

  it('refuses two moves of one gear and a stored move without a version', () => {
    expect(() => moveWrites([], [move('t1', 'planned', 'g1'), move('t2', 'planned', 'g1')])).toThrow('gear g1 has two moves in one drain');
    const inline = move('t1', 'planned', 'g1');
    expect(() => moveWrites([inline], [])).toThrow('move of gear g1 has no stored version');
    expect(() => moveWrites([inline], [{ ...inline, state: 'moving' }])).toThrow('move of gear g1 has no stored version');
  });

  it('writes exactly the moves whose content differs, for any plan change (property)', () => {
    const states = ['planned', 'moving', 'moved', 'failed'] as const;
    const moveArbitrary = (uuid: string) =>
      fc.record(
        {
          gear: fc.record({ uuid: fc.constant(uuid), app: fc.constantFrom('a', 'b'), size: fc.constant('small'), doNotMove: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: ['uuid', 'app', 'size'] }),
          target: fc.constantFrom('t1', 't2'),
          state: fc.constantFrom(...states),
          attempts: fc.nat(3),
          lastError: fc.option(fc.constantFrom('exit 1', 'exit 140'), { nil: undefined }),
          retarget: fc.option(fc.boolean(), { nil: undefined }),
          version: fc.nat(9),
        },
        { requiredKeys: ['gear', 'target', 'state', 'attempts', 'version'] },
      ) as fc.Arbitrary<GearMove>;
    const uuids = ['g1', 'g2', 'g3', 'g4'];
    const plan = fc.tuple(...uuids.map((uuid) => fc.option(moveArbitrary(uuid), { nil: undefined })));
    fc.assert(
      fc.property(plan, plan, (beforeSlots, afterSlots) => {
        const before = beforeSlots.filter((m): m is GearMove => m !== undefined);
        const after = afterSlots.filter((m): m is GearMove => m !== undefined);
        const writes = moveWrites(before, after);
        const reversed = (value: object): object => Object.fromEntries(Object.entries(value).reverse().map(([key, field]) => [key, field !== null && typeof field === 'object' ? reversed(field as object) : field]));
        expect(moveWrites(before, after.map((m) => reversed(m) as GearMove))).toEqual(writes);
        const canonical = (m: GearMove) => {
          const { version: _version, ...rest } = m;
          return JSON.parse(JSON.stringify(rest)) as unknown;
        };
        for (const uuid of uuids) {
          const held = before.find((m) => m.gear.uuid === uuid);
          const next = after.find((m) => m.gear.uuid === uuid);
          const written = writes.filter((w) => (w.kind === 'delete' ? w.uuid : w.move.gear.uuid) === uuid);
          if (!held && !next) expect(written).toEqual([]);
          else if (!held) expect(written.map((w) => w.kind)).toEqual(['create']);
          else if (!next) expect(written).toEqual([{ kind: 'delete', uuid, expectedVersion: held.version }]);
          else {
            const same = isDeepStrictEqual(canonical(next), canonical(held));
            expect(written.map((w) => w.kind)).toEqual(same ? [] : ['update']);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('movesAfterWrites', () => {
  it('takes each written move as written and the others as they were stored', () => {
    const a = stored('t1', 'g1', 1);
    const b = stored('t2', 'g2', 7);
    const changedA = { ...a, state: 'moving' as const };
    const writtenA = { ...changedA, version: 2 };
    const newC = move('t1', 'planned', 'g3');
    const writtenC = { ...newC, version: 1 };
    const unchangedB = { ...b, version: undefined };
    expect(movesAfterWrites([a, b], [changedA, unchangedB, newC], [writtenA, writtenC])).toEqual([writtenA, b, writtenC]);
  });
});
