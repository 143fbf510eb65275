"""Dropout that draws 16 random bits per element instead of a float32.

tf_keras's generator-backed dropout (what the trainer builds models with, so
that dropout randomness is checkpointed) draws one float32 uniform per element
from the layer's `tf.random.Generator`, compares and selects. In a 6 x 96
student the attention-probability dropout alone covers B x heads x L x L
elements per layer (4.2M at 64 x 128), and random generation was 16% of a
training step's CPU time (framework_op_stats of `bench/train_step_bench.py`).
Drawing uint32 values, reading each as two uint16 and keeping an element when
its 16 bits are at least round(rate * 65536) halves the Philox work and skips
the float conversion: 8.8 ms instead of 13.3 ms for one [64, 4, 128, 128]
dropout on this machine.

The drop probability is round(rate * 65536) / 65536 (0.1 -> 0.100006) and kept
elements are scaled by 65536 / (65536 - round(rate * 65536)), so the layer's
expected output is still its input. Draws come from the layer's own generator,
so the trainer's checkpoints restore them exactly as before.

Example:
```python
with generator_backed_dropout():   # the trainer's context
  model = task.build_model()
use_sixteen_bit_dropout(model)     # before the first call traces dropout
```
"""

import functools
import numbers

import tensorflow as tf

_LEVELS = 1 << 16


def _keep_mask(random_generator, inputs, rate, noise_shape=None):
  """(keep, scale) from 16-bit draws, or None where the shortcut does not apply.

  None for a tensor or near-1 rate, a `noise_shape`, or a generator that is
  not `tf.random.Generator`-backed; (None, 1) for a zero rate.
  """
  random_generator._maybe_init()  # pylint: disable=protected-access
  generator = getattr(random_generator, "_generator", None)
  threshold = (round(rate * _LEVELS) if isinstance(rate, numbers.Real)
               else None)
  if (noise_shape is not None or threshold is None or
      not isinstance(generator, tf.random.Generator) or
      not 0 <= threshold < _LEVELS):
    return None
  if threshold == 0:
    return None, 1.0
  shape = tf.shape(inputs)
  size = tf.size(inputs)
  bits = generator.uniform_full_int([(size + 1) // 2], dtype=tf.uint32)
  halves = tf.reshape(tf.bitcast(bits, tf.uint16), [-1])[:size]
  keep = tf.reshape(halves, shape) >= tf.constant(threshold, tf.uint16)
  return keep, _LEVELS / (_LEVELS - threshold)


def sixteen_bit_dropout(random_generator, original, inputs, rate,
                        noise_shape=None):
  """`RandomGenerator.dropout` from 16-bit draws of its stateful generator.

  Falls back to `original` (the generator's own method) where the shortcut
  does not apply: a tensor or near-1 rate, a `noise_shape`, or a generator
  that is not `tf.random.Generator`-backed.
  """
  inputs = tf.convert_to_tensor(inputs)
  mask = _keep_mask(random_generator, inputs, rate, noise_shape)
  if mask is None:
    return original(inputs, rate, noise_shape=noise_shape)
  keep, scale = mask
  if keep is None:
    return inputs
  scale = tf.cast(scale, inputs.dtype)
  return tf.where(keep, inputs * scale, tf.zeros([], inputs.dtype))


def unscaled_dropout(dropout_layer, inputs):
  """A training-mode dropout whose scaling is left to the caller.

  For a dropout followed by a linear map, where the scale costs less after
  it: the attention's weighted values scale [B, heads, T, head_dim] instead
  of the [B, heads, T, T] probabilities. Draws the same mask, from the same
  generator, as the layer itself would in training.

  Args:
    dropout_layer: a `tf_keras.layers.Dropout` switched by
      `use_sixteen_bit_dropout`.
    inputs: what the layer would drop.

  Returns:
    (inputs with the dropped elements zeroed, the scale the kept ones need),
    or None where the layer does not draw 16 bits (not switched, a noise
    shape, a tensor rate): call the layer instead.
  """
  random_generator = getattr(dropout_layer, "_random_generator", None)
  switched = vars(random_generator).get("dropout") if random_generator else None
  if getattr(switched, "func", None) is not sixteen_bit_dropout:
    return None
  mask = _keep_mask(random_generator, inputs, dropout_layer.rate,
                    dropout_layer.noise_shape)
  if mask is None:
    return None
  keep, scale = mask
  if keep is None:
    return inputs, 1.0
  return tf.where(keep, inputs, tf.zeros([], inputs.dtype)), scale


def use_sixteen_bit_dropout(model: tf.Module) -> int:
  """Makes the generator-backed dropout of `model`'s layers draw 16 bits.

  Call it after building and before the model's first call (tracing fixes
  the dropout ops). Layers built without `enable_tf_random_generator` keep
  their dropout.

  Returns:
    How many layers' random generators now draw 16 bits.
  """
  patched = 0
  # pylint: disable=protected-access
  for layer in model._flatten_layers(include_self=True, recursive=True):
    random_generator = getattr(layer, "_random_generator", None)
    if (random_generator is None or
        getattr(random_generator, "_rng_type", None) !=
        getattr(random_generator, "RNG_STATEFUL", object()) or
        "dropout" in vars(random_generator)):
      continue
    original = random_generator.dropout
    # object.__setattr__: an instance attribute that tracking never sees.
    object.__setattr__(
        random_generator, "dropout",
        functools.partial(sixteen_bit_dropout, random_generator, original))
    patched += 1
  # pylint: enable=protected-access
  return patched
