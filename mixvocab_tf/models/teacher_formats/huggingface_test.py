"""Tests for reading Hugging Face BERT checkpoints into the common form."""

import json
import os
import tempfile

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.models.teacher_formats import huggingface

_CONFIG = testing_utils.tiny_bert_config()  # vocab 100, hidden 32, 2 layers.


class HuggingfaceTest(tf.test.TestCase, parameterized.TestCase):

  def setUp(self):
    super().setUp()
    self.params = testing_utils.random_bert_params(_CONFIG, seed=0)

  def _new_dir(self):
    return tempfile.mkdtemp(dir=self.get_temp_dir())

  def _assert_common_form(self, weights, params):
    # The common form is exactly google-research/bert's variables.
    expected = testing_utils.google_variables(params)
    self.assertCountEqual(weights, expected)
    for name, value in expected.items():
      self.assertEqual(weights[name].dtype, np.float32, name)
      np.testing.assert_array_equal(weights[name], value, err_msg=name)

  def test_reads_names_kernels_and_config_of_the_common_form(self):
    directory = testing_utils.write_hf_checkpoint(
        self._new_dir(), self.params, _CONFIG)
    self.assertTrue(huggingface.is_checkpoint(directory))
    checkpoint = huggingface.read_checkpoint(directory)
    self.assertEqual(checkpoint.format, "huggingface")
    self.assertEqual(checkpoint.path, directory)
    self.assertTrue(checkpoint.has_mlm_head and checkpoint.has_pooler)
    self._assert_common_form(checkpoint.weights, self.params)
    config = dict(checkpoint.encoder_config)
    self.assertEqual(config.pop("initializer").stddev, 0.02)
    self.assertEqual(config, dict(
        vocab_size=100, hidden_size=32, num_layers=2, num_attention_heads=4,
        max_sequence_length=16, type_vocab_size=2, inner_dim=64,
        inner_activation="gelu", output_dropout=0.1, attention_dropout=0.1))
    read = huggingface.read_config(directory)
    read.pop("initializer")
    self.assertEqual(read, config)

  def test_reads_sharded_safetensors(self):
    from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
    directory = self._new_dir()
    state = testing_utils.hf_state_dict(self.params)
    names = sorted(state)
    shards = {"model-00001-of-00002.safetensors": names[:len(names) // 2],
              "model-00002-of-00002.safetensors": names[len(names) // 2:]}
    weight_map = {}
    for shard, shard_names in shards.items():
      safetensors_numpy.save_file({k: state[k] for k in shard_names},
                                  os.path.join(directory, shard))
      weight_map.update({k: shard for k in shard_names})
    with open(os.path.join(directory, "model.safetensors.index.json"),
              "w") as f:
      json.dump({"weight_map": weight_map}, f)
    with open(os.path.join(directory, "config.json"), "w") as f:
      json.dump(_CONFIG, f)
    self.assertTrue(huggingface.is_checkpoint(directory))
    self._assert_common_form(huggingface.read_weights(directory), self.params)

  def test_masked_lm_layout_without_pooler(self):
    # BertForMaskedLM: a "bert." prefix and no pooler.
    params = dict(self.params)
    directory = testing_utils.write_hf_checkpoint(
        self._new_dir(), params, _CONFIG, prefix="bert.")
    from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
    path = os.path.join(directory, "model.safetensors")
    state = {k: v for k, v in safetensors_numpy.load_file(path).items()
             if ".pooler." not in k}
    safetensors_numpy.save_file(state, path)
    checkpoint = huggingface.read_checkpoint(directory)
    self.assertTrue(checkpoint.has_mlm_head)
    self.assertFalse(checkpoint.has_pooler)
    expected = {k: v for k, v in testing_utils.google_variables(
        params).items() if "/pooler/" not in k}
    self.assertCountEqual(checkpoint.weights, expected)

  def test_refuses_an_untied_decoder(self):
    from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
    directory = testing_utils.write_hf_checkpoint(
        self._new_dir(), self.params, _CONFIG)
    state = testing_utils.hf_state_dict(self.params)
    state["cls.predictions.decoder.weight"] = (
        state["cls.predictions.decoder.weight"] + 1.0)
    safetensors_numpy.save_file(state,
                                os.path.join(directory, "model.safetensors"))
    with self.assertRaisesRegex(ValueError, "differs from the word embeddings"):
      huggingface.read_weights(directory)

  @parameterized.parameters(
      ("encoder.layer.0.attention.self.query.weight",
       "bert/encoder/layer_0/attention/self/query/kernel"),
      ("bert.encoder.layer.11.output.LayerNorm.bias",
       "bert/encoder/layer_11/output/LayerNorm/beta"),
      ("embeddings.LayerNorm.gamma", "bert/embeddings/LayerNorm/gamma"),
      ("embeddings.token_type_embeddings.weight",
       "bert/embeddings/token_type_embeddings"),
      ("pooler.dense.bias", "bert/pooler/dense/bias"),
      ("cls.predictions.transform.dense.weight",
       "cls/predictions/transform/dense/kernel"),
      ("cls.predictions.decoder.bias", "cls/predictions/output_bias"),
      ("cls.predictions.decoder.weight", None),  # Tied: checked, not read.
      ("cls.seq_relationship.weight", None),  # NSP.
      ("embeddings.position_ids", None),  # A buffer, not a weight.
      ("classifier.weight", None))
  def test_hf_name_to_google(self, name, expected):
    self.assertEqual(huggingface.hf_name_to_google(name), expected)

  def test_writes_an_encoder_that_reads_back_the_same(self):
    from mixvocab_tf.models import teacher_loader  # pylint: disable=g-import-not-at-top
    for hidden_act in ("gelu", "gelu_new"):
      config = dict(_CONFIG, hidden_act=hidden_act)
      source = testing_utils.write_hf_checkpoint(self._new_dir(), self.params,
                                                 config, prefix="bert.")
      vocab = os.path.join(source, "vocab.txt")
      with open(vocab, "w") as f:
        f.write("".join(f"token{i}\n" for i in range(100)))
      checkpoint = huggingface.read_checkpoint(source)
      encoder = teacher_loader.load_bert_encoder(checkpoint)
      written = huggingface.write_checkpoint(
          encoder, checkpoint.encoder_config, vocab,
          os.path.join(self._new_dir(), "out"))
      # The encoder's weights, not the MLM head's: BertModel's names.
      expected = {k: v for k, v in testing_utils.google_variables(
          self.params).items() if not k.startswith("cls/")}
      read = huggingface.read_checkpoint(written)
      self.assertCountEqual(read.weights, expected)
      for name, value in expected.items():
        np.testing.assert_array_equal(read.weights[name], value,
                                      err_msg=name)
      again = dict(read.encoder_config)
      first = dict(checkpoint.encoder_config)
      self.assertEqual(again.pop("initializer").stddev,
                       first.pop("initializer").stddev)
      self.assertEqual(again, first)
      with open(os.path.join(written, "vocab.txt")) as f:
        self.assertEqual(f.read().split(), [f"token{i}" for i in range(100)])
      # Names inverse to the reader's.
      for name in expected:
        self.assertEqual(huggingface.hf_name_to_google(
            huggingface.google_name_to_hf(name)), name)

  def test_activations_keep_their_hugging_face_meaning(self):
    for hidden_act, expected in (("gelu", "gelu"), ("gelu_new", "Text>gelu"),
                                 ("gelu_pytorch_tanh", "Text>gelu"),
                                 ("silu", "swish")):
      config = huggingface.encoder_config(dict(_CONFIG, hidden_act=hidden_act))
      self.assertEqual(config["inner_activation"], expected)
    with self.assertRaisesRegex(ValueError, "Unsupported hidden_act 'mish'"):
      huggingface.encoder_config(dict(_CONFIG, hidden_act="mish"))
    with self.assertRaisesRegex(ValueError, "layer_norm_eps must be 1e-12"):
      huggingface.encoder_config(dict(_CONFIG, layer_norm_eps=1e-5))
    with self.assertRaisesRegex(ValueError, "model_type 'roberta'"):
      huggingface.encoder_config(dict(_CONFIG, model_type="roberta"))

  def test_is_checkpoint_and_torch_pickles(self):
    directory = self._new_dir()
    self.assertFalse(huggingface.is_checkpoint(directory))
    self.assertFalse(huggingface.is_checkpoint(
        os.path.join(directory, "missing")))
    huggingface.check_not_torch_pickle(directory)  # Nothing to refuse.
    for name in ("config.json", "pytorch_model.bin"):
      with open(os.path.join(directory, name), "w") as f:
        f.write("{}")
    self.assertFalse(huggingface.is_checkpoint(directory))
    with self.assertRaisesRegex(ValueError, "torch pickle"):
      huggingface.check_not_torch_pickle(directory)


if __name__ == "__main__":
  tf.test.main()
