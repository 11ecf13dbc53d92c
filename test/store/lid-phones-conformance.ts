/**
 * Phones learned for hidden ids (`@lid`), on every adapter: per instance, a later pair replaces an earlier one,
 * many in one call, and none outlives its instance.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/store/ports.ts';
import { T0, uid } from './records.ts';

export function lidPhonesConformance(name: string, open: () => Promise<Store>): void {
  describe(`learned phones of hidden ids: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    async function instance(id = uid('ins')): Promise<string> {
      await store.catalog.createInstance({
        instance_id: id,
        name: 'lids',
        status: 'STOPPED',
        phone: null,
        created_at: T0,
      });
      return id;
    }
    const known = async (ins: string, lids: string[]) =>
      Object.fromEntries(await store.lidPhones.phonesOfLids(ins, lids));

    test('what an instance learned, for the ids asked, and nothing it did not', async () => {
      const ins = await instance();
      assert.deepEqual(await known(ins, ['1@lid']), {});
      await store.lidPhones.learnLidPhones(
        ins,
        [
          ['1@lid', '491701'],
          ['2@lid', '491702'],
        ],
        T0,
      );
      assert.deepEqual(await known(ins, ['1@lid', '2@lid', '3@lid']), {
        '1@lid': '491701',
        '2@lid': '491702',
      });
      assert.deepEqual(await known(ins, ['2@lid']), { '2@lid': '491702' });
      assert.deepEqual(await known(ins, []), {});
    });

    test('a later pair replaces the earlier one; the same pair again changes nothing', async () => {
      const ins = await instance();
      await store.lidPhones.learnLidPhones(ins, [['1@lid', '491701']], T0);
      await store.lidPhones.learnLidPhones(ins, [['1@lid', '491799']], T0 + 1);
      await store.lidPhones.learnLidPhones(ins, [['1@lid', '491799']], T0 + 2);
      assert.deepEqual(await known(ins, ['1@lid']), { '1@lid': '491799' });
      await store.lidPhones.learnLidPhones(ins, [], T0 + 3);
      assert.deepEqual(await known(ins, ['1@lid']), { '1@lid': '491799' });
    });

    test('one id twice in one call: the last one', async () => {
      const ins = await instance();
      await store.lidPhones.learnLidPhones(
        ins,
        [
          ['1@lid', '491701'],
          ['1@lid', '491702'],
        ],
        T0,
      );
      assert.deepEqual(await known(ins, ['1@lid']), { '1@lid': '491702' });
    });

    test('per instance: another instance knows nothing of it', async () => {
      const [a, b] = [await instance(), await instance()];
      await store.lidPhones.learnLidPhones(a, [['1@lid', '491701']], T0);
      await store.lidPhones.learnLidPhones(b, [['2@lid', '491702']], T0);
      assert.deepEqual(await known(b, ['1@lid', '2@lid']), { '2@lid': '491702' });
      assert.deepEqual(await known(a, ['1@lid', '2@lid']), { '1@lid': '491701' });
    });

    test('many at once', async () => {
      const ins = await instance();
      const pairs = Array.from({ length: 600 }, (_, i): [string, string] => [`${i}@lid`, `4917${i}`]);
      await store.lidPhones.learnLidPhones(ins, pairs, T0);
      const all = await store.lidPhones.phonesOfLids(
        ins,
        pairs.map(([lid]) => lid),
      );
      assert.equal(all.size, 600);
      assert.equal(all.get('599@lid'), '4917599');
    });

    test('deleting the instance forgets what it learned; an instance that does not exist learns nothing', async () => {
      const ins = await instance();
      await store.lidPhones.learnLidPhones(ins, [['1@lid', '491701']], T0);
      assert.equal(await store.catalog.deleteInstance(ins), true);
      await store.lidPhones.learnLidPhones(ins, [['2@lid', '491702']], T0).catch(() => {});
      await instance(ins);
      assert.deepEqual(await known(ins, ['1@lid', '2@lid']), {});
    });
  });
}
