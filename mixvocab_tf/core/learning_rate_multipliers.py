"""Per-variable learning-rate multipliers for the legacy Keras Adam family.

Fine-tuning a pretrained encoder with new task heads moves both at one
learning rate, sized for the encoder (1e-4 for the default teacher). Adam's
steps are about that rate per weight whatever the gradient's scale, so a head
initialised at a standard deviation of 0.02 needs hundreds of steps just to
reach the size of a trained one, and the encoder's schedule is set long
enough to wait for it. A larger rate for the heads alone (as in ULMFiT's
discriminative fine-tuning, Howard and Ruder, 2018, Section 3.2, and the
per-layer rates of ELECTRA and DeBERTa's fine-tuning) lets them catch up in a
few dozen steps; the encoder keeps its rate.

`official.modeling.optimization` has no per-variable rate, so this wraps the
optimizer the factory built: its class is swapped for a subclass that scales
the learning rate (and the bias-corrected rate Adam's sparse update reads) of
the variables whose names match, before the class's own update. Slots,
hyperparameters and checkpoints stay those of its class. With
`AdamWeightDecay` the weight decay, which is proportional to the rate, scales
with it.

Example:
```python
optimizer = tf_keras.optimizers.legacy.Adam(1e-4)
use_learning_rate_multipliers(optimizer, {"classifier": 10.0})
```
"""

import re
from typing import Mapping

import tf_keras

_CLASSES = {}


class _MultiplierMixin:
  """Scales the learning rate of matching variables in dense and sparse updates.

  The legacy optimizers compute their coefficients once a step per (device,
  dtype) in `apply_state`; a matching variable gets a copy with the rates
  scaled, so the rest of the update (the class's own, or a mixin's below
  this one) is unchanged.
  """

  _learning_rate_multipliers = ()

  def _multiplier(self, var):
    for pattern, multiplier in self._learning_rate_multipliers:
      if pattern.search(var.name):
        return multiplier
    return None

  def _scaled_state(self, var, apply_state):
    multiplier = self._multiplier(var)
    if multiplier is None:
      return apply_state
    key = (var.device, var.dtype.base_dtype)
    coefficients = dict((apply_state or {}).get(key) or
                        self._fallback_apply_state(*key))
    for name in ("lr_t", "lr"):
      if name in coefficients:
        coefficients[name] = coefficients[name] * multiplier
    return {key: coefficients}

  def _resource_apply_dense(self, grad, var, apply_state=None):
    return super()._resource_apply_dense(
        grad, var, apply_state=self._scaled_state(var, apply_state))

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    return super()._resource_apply_sparse(
        grad, var, indices, apply_state=self._scaled_state(var, apply_state))


def use_learning_rate_multipliers(optimizer,
                                  multipliers: Mapping[str, float]):
  """Scales the learning rate of the variables `multipliers` names.

  Call before the optimizer's first `apply_gradients` (a traced step keeps
  the update it was traced with).

  Args:
    optimizer: a `tf_keras.optimizers.legacy.Adam` or a subclass (e.g.
      `official`'s `AdamWeightDecay`, or one with lazy sparse updates).
    multipliers: regular expression -> multiplier of the learning rate; a
      variable takes the first pattern (in the mapping's order) that
      `re.search` finds in its name, and the optimizer's rate when none does.

  Returns:
    `optimizer`, updated in place.

  Raises:
    ValueError: another optimizer, a pattern that does not compile, or a
      multiplier that is not a positive number.
  """
  cls = type(optimizer)
  if not isinstance(optimizer, tf_keras.optimizers.legacy.Adam):
    raise ValueError("Learning-rate multipliers need a legacy Keras Adam or "
                     f"AdamWeightDecay optimizer; received {cls.__name__}.")
  compiled = []
  for pattern, multiplier in dict(multipliers).items():
    try:
      regex = re.compile(pattern)
    except re.error as e:
      raise ValueError(f"Learning-rate multiplier pattern {pattern!r} is not "
                       f"a regular expression: {e}.") from e
    if isinstance(multiplier, bool) or not isinstance(
        multiplier, (int, float)) or not multiplier > 0:
      raise ValueError(f"Learning-rate multipliers must be positive numbers; "
                       f"received {multiplier!r} for {pattern!r}.")
    compiled.append((regex, float(multiplier)))
  if not issubclass(cls, _MultiplierMixin):
    if cls not in _CLASSES:
      _CLASSES[cls] = type(f"{cls.__name__}WithMultipliers",
                           (_MultiplierMixin, cls), {"__module__": __name__})
    optimizer.__class__ = _CLASSES[cls]
  optimizer._learning_rate_multipliers = tuple(compiled)  # pylint: disable=protected-access
  return optimizer
