"""The exact GELU with a hand-written gradient, for training steps.

BERT's feed-forward activation is the exact GELU, x * Phi(x) (Hendrycks and
Gimpel, 2016), which TensorFlow computes as `0.5 * x * erfc(-x / sqrt(2))`
(`tf.nn.gelu`, what tf_keras's "gelu" calls). Its gradient, derived by
autodiff through those ops, takes six more element-wise passes over the
[batch, length, inner_dim] activations, the largest tensors of a small
encoder's step: in the 6 x 96 student's masked-LM step at 64 x 128 tokens,
GELU forward and backward were 18% of the operators' time (TensorFlow's op
profile of `bench/train_step_bench.py`). This version computes the same
forward values bit for bit and the gradient in closed form,

  d/dx [x Phi(x)] = Phi(x) + x phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi),

from Phi(x) and -x / sqrt(2), which the forward pass already holds. The
gradient differs from autodiff's in the last bits only (within 1e-6).

TensorFlow has no fused GELU kernel for training on CPU; this is written by
hand because neither tf_keras nor Model Garden offer the gradient in closed
form. The trainer switches the activation layers of the models it trains
(`use_closed_form_gelu_gradient`); exported models keep `tf.nn.gelu`, whose
forward values are the same.

Example:
```python
model = task.build_model()
use_closed_form_gelu_gradient(model)  # before the first call traces it
```
"""

import math

import tensorflow as tf
import tf_keras

_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu(x):
  """The exact GELU, `tf.nn.gelu(x)` bit for bit, with a closed-form gradient.

  A plain function (not the `tf.custom_gradient` object itself), so that a
  layer using it serializes as tf_keras's "gelu".

  Args:
    x: a floating-point tensor.

  Returns:
    x * Phi(x), computed as `0.5 * x * erfc(-x / sqrt(2))`.
  """
  return _gelu(x)


@tf.custom_gradient
def _gelu(x):
  t = x * tf.cast(-_SQRT_HALF, x.dtype)
  # Scaling by 0.5 is exact, so (0.5 * x) * e and x * (0.5 * e) are one value.
  cdf = 0.5 * tf.math.erfc(t)

  def grad(upstream):
    # exp(-t^2) = exp(-x^2 / 2): Square, Neg and Exp make one fused kernel
    # (Grappler's unary-op composition).
    density = tf.exp(-tf.square(t))
    slope = cdf + x * density * tf.cast(_INV_SQRT_2PI, x.dtype)
    return upstream * slope

  return x * cdf, grad


def use_closed_form_gelu_gradient(model: tf.Module) -> int:
  """Switches `model`'s exact-GELU activations to `gelu` above.

  Covers `tf_keras.layers.Activation` and layers with an `activation`
  attribute (Dense, EinsumDense) whose activation is tf_keras's "gelu" (exact,
  its default). Call it after building and before the model's first call
  (tracing fixes the ops). Other activations, the tanh approximation among
  them, are left alone.

  Returns:
    How many layers now use the closed-form gradient.
  """
  switched = 0
  # pylint: disable=protected-access
  for layer in model._flatten_layers(include_self=True, recursive=True):
    if getattr(layer, "activation", None) is tf_keras.activations.gelu:
      layer.activation = gelu
      switched += 1
  # pylint: enable=protected-access
  return switched
