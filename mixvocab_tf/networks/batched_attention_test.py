"""Tests for the encoders' attention products as batched matmuls."""

import numpy as np
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks as nlp_networks

from mixvocab_tf.core import dropout
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.networks import batched_attention
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import plain_bert_encoder


def _features(batch=4, length=9, vocab=50, seed=0):
  rng = np.random.RandomState(seed)
  lengths = rng.randint(min(2, length), length + 1, (batch, 1))
  return dict(
      input_word_ids=tf.constant(rng.randint(1, vocab, (batch, length)),
                                 tf.int32),
      input_mask=tf.constant((np.arange(length)[None] < lengths).astype(
          np.int32)),
      input_type_ids=tf.zeros((batch, length), tf.int32))


_CONFIG = dict(vocab_size=50, hidden_size=24, num_layers=2,
               num_attention_heads=4, inner_dim=48, inner_activation="gelu",
               return_attention_scores=True)


def _einsum_twin(encoder):
  """A BertEncoderV2 of the same config and weights that keeps the einsums."""
  twin = nlp_networks.BertEncoderV2(**_CONFIG)
  twin(_features(batch=1, length=1))
  twin.set_weights(encoder.get_weights())
  return twin


class BatchedAttentionTest(tf.test.TestCase):

  def test_encoders_switch_every_attention_layer(self):
    encoder = plain_bert_encoder.PlainBertEncoder(
        vocab_size=50, hidden_size=16, num_layers=3, num_attention_heads=4,
        inner_dim=32)
    self.assertEqual(
        [batched_attention.uses_batched_matmuls(b._attention_layer)
         for b in encoder.transformer_layers], [True] * 3)
    dual = dual_vocab_bert_encoder.DualVocabBertEncoder(
        teacher_vocab_size=50, student_vocab_size=30, hidden_size=16,
        num_layers=2, num_attention_heads=2, inner_dim=32,
        student_embedding_width=8)
    self.assertEqual(
        [batched_attention.uses_batched_matmuls(b._attention_layer)
         for b in dual.bert_encoder.transformer_layers], [True] * 2)

  def test_same_outputs_scores_and_gradients_as_the_einsums(self):
    tf_keras.utils.set_random_seed(1)
    encoder = plain_bert_encoder.PlainBertEncoder(**_CONFIG)
    twin = _einsum_twin(encoder)
    self.assertFalse(batched_attention.uses_batched_matmuls(
        twin.transformer_layers[0]._attention_layer))
    features = _features()

    def outputs_and_gradients(model):
      with tf.GradientTape() as tape:
        outputs = model(features, training=False)
        loss = tf.reduce_sum(outputs["sequence_output"] ** 2)
      gradients = tape.gradient(loss, model.trainable_variables)
      return outputs, [tf.convert_to_tensor(g) for g in gradients
                       if g is not None]

    ours, our_gradients = outputs_and_gradients(encoder)
    theirs, their_gradients = outputs_and_gradients(twin)
    # The forward pass is the einsums' bit for bit, masked positions included.
    self.assertAllEqual(ours["sequence_output"], theirs["sequence_output"])
    for a, b in zip(ours["attention_scores"], theirs["attention_scores"]):
      self.assertAllEqual(a, b)
    self.assertLen(our_gradients, len(their_gradients))
    for a, b in zip(our_gradients, their_gradients):
      self.assertAllClose(a, b, rtol=1e-5, atol=1e-5)

  def test_long_sequences_compute_the_same_within_rounding(self):
    # From TRANSPOSED_GRADIENTS_FROM_LENGTH tokens on, the key's and the
    # value's gradients are computed transposed.
    tf_keras.utils.set_random_seed(3)
    encoder = plain_bert_encoder.PlainBertEncoder(**_CONFIG)
    twin = _einsum_twin(encoder)
    features = _features(
        batch=2, length=batched_attention.TRANSPOSED_GRADIENTS_FROM_LENGTH)

    def outputs_and_gradients(model):
      with tf.GradientTape() as tape:
        outputs = model(features, training=False)
        loss = tf.reduce_sum(outputs["sequence_output"] ** 2)
      gradients = tape.gradient(loss, model.trainable_variables)
      return outputs["sequence_output"], [tf.convert_to_tensor(g)
                                          for g in gradients if g is not None]

    ours, our_gradients = outputs_and_gradients(encoder)
    theirs, their_gradients = outputs_and_gradients(twin)
    self.assertAllEqual(ours, theirs)
    self.assertLen(our_gradients, len(their_gradients))
    for a, b in zip(our_gradients, their_gradients):
      self.assertAllClose(a, b, rtol=1e-5, atol=1e-5)

  def test_long_sequences_transpose_the_key_and_value_gradients(self):
    head_dim = _CONFIG["hidden_size"] // _CONFIG["num_attention_heads"]
    encoder = plain_bert_encoder.PlainBertEncoder(**_CONFIG)

    def transposed_operand_products(length):
      # The last two dimensions of every batched matmul of the gradient
      # graph whose first operand is transposed.
      features = _features(batch=2, length=length)

      def gradients(f):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(encoder(f, training=False)[
              "sequence_output"] ** 2)
        return tape.gradient(loss, encoder.trainable_variables)

      graph = tf.function(gradients).get_concrete_function(features).graph
      return {tuple(op.outputs[0].shape.as_list()[-2:])
              for op in graph.get_operations()
              if op.type == "BatchMatMulV2" and op.get_attr("adj_x")}

    long = batched_attention.TRANSPOSED_GRADIENTS_FROM_LENGTH
    # Autodiff's: [S, S]^T x [S, D] products, one per key and one per value.
    self.assertEqual(transposed_operand_products(long - 1),
                     {(long - 1, head_dim)})
    # Here [T, D]^T x [T, S] products: the [D, S] gradients, transposed after.
    self.assertEqual(transposed_operand_products(long), {(head_dim, long)})

  def test_training_scales_the_weighted_values_not_the_probabilities(self):
    # As the trainer builds models: generator-backed dropout, 16-bit draws.
    config = dict(_CONFIG, attention_dropout_rate=0.3, dropout_rate=0.0)
    tf_keras.utils.set_random_seed(2)
    with trainer_lib._generator_backed_dropout():
      encoder = plain_bert_encoder.PlainBertEncoder(**config)
      twin = nlp_networks.BertEncoderV2(**config)
      twin(_features(batch=1, length=1))
    twin.set_weights(encoder.get_weights())
    self.assertEqual(dropout.use_sixteen_bit_dropout(encoder),
                     dropout.use_sixteen_bit_dropout(twin))
    features = _features()
    call = lambda model: model(features, training=True)["sequence_output"]
    call(encoder), call(twin)  # Creates the generators.
    for ours, theirs in zip(trainer_lib.dropout_generators(encoder),
                            trainer_lib.dropout_generators(twin)):
      theirs.state.assign(ours.state)
    # The same masks from the same generators, the scale applied after the
    # weighted sum instead of before it.
    self.assertAllClose(call(encoder), call(twin), rtol=1e-5, atol=1e-5)
    self.assertNotAllClose(call(encoder), encoder(features, training=False)[
        "sequence_output"])

    def probability_products(model, training):
      # Multiplications whose result has the [B, heads, T, T] shape.
      graph = tf.function(lambda f: model(f, training=training)
                          ).get_concrete_function(features).graph
      return sum(op.type == "Mul" and op.outputs[0].shape.as_list() ==
                 [4, _CONFIG["num_attention_heads"], 9, 9]
                 for op in graph.get_operations())

    layers = _CONFIG["num_layers"]
    self.assertEqual(probability_products(twin, True), layers)
    self.assertEqual(probability_products(encoder, True), 0)
    self.assertEqual(probability_products(encoder, False), 0)

  def test_bfloat16_layers_compute_the_einsums(self):

    def einsums(encoder):
      features = _features()
      call = tf.function(lambda f: encoder(f, training=False))
      graph = call.get_concrete_function(features).graph
      return sum(op.type == "Einsum" for op in graph.get_operations())

    layers = _CONFIG["num_layers"]
    # Each block's projections (query, key, value, output, both feed-forward
    # layers) are einsums either way; the attention adds its two products.
    self.assertEqual(
        einsums(plain_bert_encoder.PlainBertEncoder(**_CONFIG)), 6 * layers)
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
      encoder = plain_bert_encoder.PlainBertEncoder(**_CONFIG)
      self.assertTrue(batched_attention.uses_batched_matmuls(
          encoder.transformer_layers[0]._attention_layer))
      self.assertEqual(einsums(encoder), 8 * layers)
    finally:
      tf_keras.mixed_precision.set_global_policy("float32")

  def test_other_attention_axes_keep_their_einsums(self):
    encoder = nlp_networks.BertEncoderV2(
        vocab_size=50, hidden_size=16, num_layers=1, num_attention_heads=2,
        inner_dim=32)
    encoder(_features(batch=1, length=1))
    encoder.transformer_layers[0]._attention_layer._attention_axes = (1, 2)
    self.assertEqual(batched_attention.use_batched_matmuls(encoder), 0)
    self.assertFalse(batched_attention.uses_batched_matmuls(
        encoder.transformer_layers[0]._attention_layer))


if __name__ == "__main__":
  tf.test.main()
