"""darts_trie builds arrays that read back every key, and nothing else."""

import random

import pytest

from mixvocab_tf.text import darts_trie


def test_keys_read_back_and_other_strings_miss():
  rng = random.Random(0)
  keys = sorted({bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 5)))
                 for _ in range(3000)})
  keys += [b"ab", b"abc", b"abcd"]  # Keys that are prefixes of keys.
  keys = sorted(set(keys))
  values = [rng.randrange(0, 2**31) for _ in keys]
  array = darts_trie.build(keys, values)
  assert array.dtype.name == "uint32" and len(array) % 256 == 0
  expected = dict(zip(keys, values))
  for key, value in expected.items():
    assert darts_trie.lookup(array, key) == value
  probes = [bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 6)))
            for _ in range(3000)] + [b"a", b"abx", b"abcde"]
  for probe in probes:
    assert darts_trie.lookup(array, probe) == expected.get(probe)


def test_identical_subtrees_are_stored_once():
  # 4,096 three-byte code points with one value: 64 last-byte blocks alike.
  keys = [chr(cp).encode("utf-8") for cp in range(0x4E00, 0x5E00)]
  array = darts_trie.build(keys, [5] * len(keys))
  assert len(array) <= 512
  assert all(darts_trie.lookup(array, k) == 5 for k in keys)
  assert darts_trie.lookup(array, chr(0x5E00).encode("utf-8")) is None


@pytest.mark.parametrize("keys,values,message", [
    ([], [], "at least one key"),
    ([b""], [1], "empty or holds a 0 byte"),
    ([b"a\x00"], [1], "empty or holds a 0 byte"),
    ([b"a", b"a"], [1, 2], "Duplicate"),
    ([b"a"], [2**31], "outside"),
    ([b"a"], [1, 2], "1 keys but 2 values"),
])
def test_bad_input_is_refused(keys, values, message):
  with pytest.raises(ValueError, match=message):
    darts_trie.build(keys, values)
