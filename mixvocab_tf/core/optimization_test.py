"""Tests of the LAMB / warm-up / linear-decay optimizer config."""

import tensorflow as tf

from official.modeling.optimization import lamb
from mixvocab_tf.core import optimization


class OptimizationTest(tf.test.TestCase):

  def test_schedule_warms_up_linearly_then_decays_linearly_to_zero(self):
    config = optimization.optimization_config(train_steps=1000,
                                              learning_rate=1e-3)
    optimizer, schedule = optimization.build_optimizer(config)
    self.assertIsInstance(optimizer, lamb.LAMB)
    rates = {step: float(schedule(step)) for step in (0, 50, 100, 550, 1000)}
    self.assertAllClose(rates, {0: 0.0, 50: 5e-4, 100: 1e-3, 550: 5e-4,
                                1000: 0.0}, atol=1e-9)

  def test_paper_defaults_and_no_decay_on_layer_norm_and_bias(self):
    config = optimization.optimization_config(train_steps=10)
    lamb_config = config.optimizer.lamb
    self.assertEqual(config.optimizer.type, "lamb")
    self.assertAllClose(config.learning_rate.polynomial.initial_learning_rate,
                        1.25e-3)
    self.assertEqual(config.warmup.linear.warmup_steps, 1)
    for pattern in ("LayerNorm", "layer_norm", "bias"):
      self.assertIn(pattern, lamb_config.exclude_from_weight_decay)
    optimizer, _ = optimization.build_optimizer(config)
    # pylint: disable=protected-access
    self.assertFalse(optimizer._do_use_weight_decay(
        "encoder/transformer/layer_0/output_layer_norm/gamma:0"))
    self.assertFalse(optimizer._do_use_weight_decay("dense/bias:0"))
    self.assertTrue(optimizer._do_use_weight_decay("dense/kernel:0"))
    # pylint: enable=protected-access

  def test_clip_norm_is_recorded_but_not_given_to_the_optimizer(self):
    config = optimization.optimization_config(train_steps=10, clip_norm=2.0)
    self.assertEqual(optimization.clip_norm_of(config), 2.0)
    optimizer, _ = optimization.build_optimizer(config)
    self.assertIsNone(optimizer.global_clipnorm)
    # The caller's config keeps its record.
    self.assertEqual(optimization.clip_norm_of(config), 2.0)

  def test_bad_values_say_what_was_received(self):
    with self.assertRaisesRegex(ValueError, "optimizer must be one of .*'sgdd'"):
      optimization.optimization_config(train_steps=10, optimizer="sgdd")
    with self.assertRaisesRegex(ValueError, "warmup_steps .* 20 and 10"):
      optimization.optimization_config(train_steps=10, warmup_steps=20)
    with self.assertRaisesRegex(ValueError, "learning_rate .* -1"):
      optimization.optimization_config(train_steps=10, learning_rate=-1)


if __name__ == "__main__":
  tf.test.main()
