"""Double-array tries in darts-clone's format, the one tensorflow_text reads.

tensorflow_text's tokenizer models (`FastBertNormalizerModel`,
`FastWordpieceTokenizerConfig`) hold their tries as darts-clone double arrays
(`core/kernels/darts_clone_trie_wrapper.h`), and its Python API builds them
only from its own fixed rules. `build` makes such an array from any
(byte-string key, value) pairs, so that `export/spaced_normalizer.py` can
give the normalizer a mapping of its own; `lookup` reads one back exactly as
the C++ wrapper does (the tests check one against the other).

The format, per 32-bit unit: bits 0-7 the label (the byte that leads to this
unit), bit 8 "has a value", bits 10-30 the offset to the child block (bit 9:
shifted left by 8), bit 31 "this unit is a value" (bits 0-30). From node `i`
with unit `u`, byte `c` leads to unit `i ^ offset(u) ^ c` if that unit's label
is `c`; a node's value sits at `i ^ offset(u)` (label 0, which no key
contains). Identical subtrees are stored once (as darts-clone's DAWG does):
a thousand CJK characters with the same value share their last-byte blocks.

Example:
```python
array = darts_trie.build([b"ab", b"b"], [7, 9])
darts_trie.lookup(array, b"ab")  # 7
darts_trie.lookup(array, b"a")   # None
```
"""

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

_VALUE_BIT = 1 << 31
_HAS_LEAF_BIT = 1 << 8
_EXTENSION_BIT = 1 << 9
_MAX_VALUE = (1 << 31) - 1
_BLOCK = 256


def _encode_offset(offset: int) -> int:
  """The offset bits of a unit (darts-clone's `set_offset`)."""
  if offset < (1 << 21):
    return offset << 10
  if offset >= (1 << 29) or offset & 0xFF:
    raise ValueError(f"Offset {offset} cannot be stored in a darts-clone "
                     "unit (the trie is too large).")
  return (offset << 2) | _EXTENSION_BIT


def _offset(unit: int) -> int:
  return (unit >> 10) << ((unit & _EXTENSION_BIT) >> 6)


def _label(unit: int) -> int:
  return unit & 0x800000FF


def lookup(array: Sequence[int], key: bytes) -> Optional[int]:
  """The value of `key` in a darts-clone array, or None (the C++ wrapper's walk).

  Args:
    array: the trie's uint32 units.
    key: a non-empty byte string.

  Returns:
    Its value, or None if the array does not hold the key.
  """
  node = 0
  unit = int(array[0])
  for byte in key:
    node ^= _offset(unit) ^ byte
    if node >= len(array):
      return None
    unit = int(array[node])
    if _label(unit) != byte:
      return None
  if not unit & _HAS_LEAF_BIT:
    return None
  return int(array[node ^ _offset(unit)]) & _MAX_VALUE


def _minimized(keys: Sequence[bytes], values: Sequence[int]):
  """The keys' trie with identical subtrees merged.

  Returns:
    (nodes, root): `nodes[k]` is a tuple of (label, child) sorted by label,
    where a child is a node index, or for label 0 the key's value.
  """
  trie: Dict = {}
  for key, value in zip(keys, values):
    node = trie
    for byte in key:
      node = node.setdefault(byte, {})
    node[0] = int(value)
  nodes: List[Tuple] = []
  index: Dict[Tuple, int] = {}

  def canonical(node) -> int:
    # Iterative post-order: keys are short (UTF-8 code points), but a caller
    # may give long ones.
    stack = [(node, False)]
    ids = {}
    while stack:
      current, expanded = stack.pop()
      if not expanded:
        stack.append((current, True))
        stack.extend((child, False) for label, child in current.items()
                     if label)
        continue
      signature = tuple(
          sorted((label, child if not label else ids[id(child)])
                 for label, child in current.items()))
      if signature not in index:
        index[signature] = len(nodes)
        nodes.append(signature)
      ids[id(current)] = index[signature]
    return ids[id(node)]

  return nodes, canonical(trie)


def build(keys: Sequence[bytes], values: Sequence[int]) -> np.ndarray:
  """A darts-clone double array mapping each key to its value.

  Args:
    keys: distinct non-empty byte strings without a 0 byte.
    values: ints in [0, 2**31).

  Returns:
    The uint32 units, a multiple of 256 long.

  Raises:
    ValueError: no keys, an empty or duplicate key, a 0 byte, a value out of
      range.
  """
  keys = [bytes(k) for k in keys]
  if not keys:
    raise ValueError("A darts-clone trie needs at least one key.")
  if len(keys) != len(values):
    raise ValueError(f"{len(keys)} keys but {len(values)} values.")
  if len(set(keys)) != len(keys):
    raise ValueError("Duplicate keys.")
  for key, value in zip(keys, values):
    if not key or 0 in key:
      raise ValueError(f"Key {key!r} is empty or holds a 0 byte; darts-clone "
                       "keys cannot.")
    if not 0 <= int(value) <= _MAX_VALUE:
      raise ValueError(f"Value {value} of {key!r} is outside [0, 2**31).")
  nodes, root = _minimized(keys, values)

  # Place each distinct node's block of children at a base B: child `c` at
  # B ^ c, its value (label 0) at B. First fit, breadth first from the root.
  used = bytearray(_BLOCK * 4)
  used[0] = 1  # The root's own unit.
  bases: Dict[int, int] = {}
  used_bases = set()
  order, seen = [root], {root}
  for k in order:
    for label, child in nodes[k]:
      if label and child not in seen and nodes[child]:
        seen.add(child)
        order.append(child)
  search_from = 1
  for k in order:
    labels = [label for label, _ in nodes[k]]
    if not labels:
      continue
    first = labels[0]
    position = search_from
    while True:
      position = used.find(0, position)
      if position < 0:
        position = len(used)
      base = position ^ first
      if (base and base not in used_bases and
          all(base ^ label >= len(used) or not used[base ^ label]
              for label in labels)):
        break
      position += 1
    needed = max(base ^ label for label in labels) + 1
    if needed > len(used):
      used.extend(bytes(max(needed - len(used), len(used))))
    for label in labels:
      used[base ^ label] = 1
    bases[k] = base
    used_bases.add(base)
    search_from = used.find(0, search_from)

  size = (max(max(bases.values()) | (_BLOCK - 1), used.rfind(1)) + 1)
  size = -(-size // _BLOCK) * _BLOCK
  array = np.zeros(size, dtype=np.uint64)

  def unit_of(position, k):
    """The unit of node k at `position`: its offset and has-value bit."""
    unit = 0
    if nodes[k]:
      unit |= _encode_offset(position ^ bases[k])
      if nodes[k][0][0] == 0:
        unit |= _HAS_LEAF_BIT
    return unit

  array[0] = unit_of(0, root)
  for k, base in bases.items():
    for label, child in nodes[k]:
      if label == 0:
        array[base] = _VALUE_BIT | child
      else:
        array[base ^ label] = label | unit_of(base ^ label, child)

  # Unused units get a label that no walk into them expects: a walk from base
  # B reaches unit i by byte i ^ B, so label i ^ U, for a U in i's block that
  # is no node's base, never matches.
  free = np.frombuffer(bytes(used[:size]).ljust(size, b"\0"), np.uint8) == 0
  free[0] = False
  taken_in_block: Dict[int, set] = {}
  for b in used_bases:
    taken_in_block.setdefault(b // _BLOCK, set()).add(b)
  for block in np.unique(np.nonzero(free)[0] // _BLOCK):
    start = int(block) * _BLOCK
    taken = taken_in_block.get(int(block), set())
    spare = next((u for u in range(start, start + _BLOCK) if u not in taken),
                 None)
    if spare is None:
      raise ValueError(f"Block {block} has no spare offset.")
    for i in np.nonzero(free[start:start + _BLOCK])[0]:
      array[start + i] = (start + int(i)) ^ spare
  return array.astype(np.uint32)
