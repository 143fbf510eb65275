"""Lazy Adam for sparse gradients: only the rows a batch touched are updated.

A word table's gradient is sparse (`tf.IndexedSlices`: the rows of the
tokens in the batch), but Keras's Adam applies it densely: it decays both
moment slots over the whole table, scatters the batch's rows into them and
then moves every row of the table. For the default teacher's 30,522 x 384
word table (half of its 22.7M parameters) that is several passes over 47 MB
at each step for the few hundred rows a batch of short queries uses.

The lazy update (TensorFlow 1's `LazyAdamOptimizer`, TF Addons' `LazyAdam`)
reads, updates and writes back only those rows: their moments decay, take the
gradient and move the row, and every other row keeps its value and moments
until a batch uses it again. Dense gradients are applied as before. For a
row that every step touches the two updates are the same; the difference is
that an unused row does not keep drifting on its old momentum (and, with
`AdamWeightDecay`, is not decayed while unused).

Measured on the default teacher's SNIPS fine-tuning step (batch 64 queries
of about 13 tokens, 100 steps after 30, a 2-core AMD EPYC): 0.62-0.71 ->
0.61-0.64 s a step (three runs each, 7% less wall and CPU time on average),
the validation scores within run-to-run differences
(`docs/PERFORMANCE.md`).

Example:
```python
optimizer = tf_keras.optimizers.legacy.Adam(1e-3)
use_lazy_sparse_updates(optimizer)  # before the first apply_gradients
```
"""

import tensorflow as tf
import tf_keras

from official.modeling.optimization import legacy_adamw

_LAZY_CLASSES = {}


class _LazySparseMixin:
  """Replaces Adam's `_resource_apply_sparse` with the lazy row update.

  `OptimizerV2` sums the gradients of repeated indices before calling it
  (`_resource_apply_sparse_duplicate_indices`), so `indices` are unique here
  and scatter updates are exact.
  """

  def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
    var_device, var_dtype = var.device, var.dtype.base_dtype
    coefficients = ((apply_state or {}).get((var_device, var_dtype)) or
                    self._fallback_apply_state(var_device, var_dtype))
    m = self.get_slot(var, "m")
    v = self.get_slot(var, "v")
    m_rows = (coefficients["beta_1_t"] * tf.gather(m, indices) +
              coefficients["one_minus_beta_1_t"] * grad)
    v_rows = (coefficients["beta_2_t"] * tf.gather(v, indices) +
              coefficients["one_minus_beta_2_t"] * tf.square(grad))
    # coefficients["lr"] is Adam's bias-corrected rate.
    step = coefficients["lr"] * m_rows / (tf.sqrt(v_rows) +
                                          coefficients["epsilon"])
    if (isinstance(self, legacy_adamw.AdamWeightDecay) and
        self._do_use_weight_decay(var.name)):
      # AdamWeightDecay decays the variable by lr_t * rate before its Adam
      # step, with the schedule's rate (not the bias-corrected one); the Adam
      # step does not read the variable, so the two add up.
      step += (coefficients["lr_t"] * coefficients["weight_decay_rate"] *
               tf.gather(var, indices))
    return tf.group(
        m.scatter_update(tf.IndexedSlices(m_rows, indices)),
        v.scatter_update(tf.IndexedSlices(v_rows, indices)),
        var.scatter_sub(tf.IndexedSlices(step, indices)))


def use_lazy_sparse_updates(optimizer):
  """Makes `optimizer` (a legacy Keras Adam or AdamWeightDecay) update lazily.

  The instance's class is swapped for a subclass that overrides only the
  sparse update, so its slots, hyperparameters and checkpoints stay those of
  its class. Call before its first `apply_gradients` (a traced step keeps
  the update it was traced with).

  Args:
    optimizer: a `tf_keras.optimizers.legacy.Adam` (or subclass, e.g.
      `official`'s `AdamWeightDecay`) without AMSGrad.

  Returns:
    `optimizer`, updated in place.

  Raises:
    ValueError: another optimizer, or Adam with AMSGrad.
  """
  cls = type(optimizer)
  if issubclass(cls, _LazySparseMixin):
    return optimizer
  if not isinstance(optimizer, tf_keras.optimizers.legacy.Adam):
    raise ValueError("Lazy sparse updates need a legacy Keras Adam or "
                     f"AdamWeightDecay optimizer; received {cls.__name__}.")
  if optimizer.amsgrad:
    raise ValueError("Lazy sparse updates do not support AMSGrad.")
  if cls not in _LAZY_CLASSES:
    _LAZY_CLASSES[cls] = type(f"Lazy{cls.__name__}", (_LazySparseMixin, cls),
                              {"__module__": __name__})
  optimizer.__class__ = _LAZY_CLASSES[cls]
  return optimizer
