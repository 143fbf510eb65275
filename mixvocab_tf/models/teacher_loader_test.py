"""Tests for the teacher checkpoint loaders, against a NumPy BERT."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.models.teacher_formats import bert_checkpoint
from mixvocab_tf.models.teacher_formats import google_research

_CONFIG = testing_utils.tiny_bert_config()  # vocab 100, hidden 32, 2 layers.


def _features(vocab_ids=False):
  word_ids = np.array([[2, 17, 99, 41, 3, 0, 0], [2, 5, 6, 7, 8, 9, 3]],
                      np.int32)
  features = dict(
      input_word_ids=word_ids,
      input_mask=np.array([[1, 1, 1, 1, 1, 0, 0], [1] * 7], np.int32),
      input_type_ids=np.array([[0, 0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1]],
                              np.int32),
      masked_lm_positions=np.array([[1, 3], [2, 6]], np.int32))
  if vocab_ids:
    features["input_vocab_ids"] = np.zeros_like(word_ids)
  return features


def _reference(params, hidden_act, features):
  return testing_utils.numpy_bert_forward(
      params, _CONFIG, features["input_word_ids"], features["input_mask"],
      features["input_type_ids"], features["masked_lm_positions"],
      hidden_act=hidden_act)


@pytest.fixture(scope="module")
def params():
  return testing_utils.random_bert_params(_CONFIG, seed=0)


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory, params):
  return testing_utils.write_hf_checkpoint(
      str(tmp_path_factory.mktemp("hf")), params, _CONFIG)


@pytest.fixture(scope="module")
def google_dir(tmp_path_factory, params):
  directory = str(tmp_path_factory.mktemp("google"))
  # Real google checkpoints also hold optimizer slots and the NSP head.
  extra = {"bert/embeddings/word_embeddings/adam_m": np.ones((100, 32)),
           "cls/seq_relationship/output_bias": np.zeros(2),
           "global_step": np.array(7, np.int64)}
  testing_utils.write_google_checkpoint(directory, params, _CONFIG,
                                        extra_variables=extra)
  return directory


# Hugging Face "gelu" is exact; google-research/bert's "gelu" is tanh.
_FORMATS = [("hf_dir", "huggingface", "gelu"),
            ("google_dir", "google", "gelu_tanh")]


@pytest.mark.parametrize("fixture,expected_format,hidden_act", _FORMATS)
def test_plain_pretrainer_matches_numpy_reference(
    request, params, fixture, expected_format, hidden_act):
  path = request.getfixturevalue(fixture)
  checkpoint = teacher_loader.read_bert_checkpoint(path)
  assert checkpoint.format == expected_format
  assert checkpoint.has_mlm_head and checkpoint.has_pooler
  config_format, config = teacher_loader.read_bert_config(path)
  assert config_format == expected_format
  assert config.pop("initializer").stddev == 0.02
  assert config == {k: v for k, v in checkpoint.encoder_config.items()
                    if k != "initializer"}
  assert config["inner_activation"] == (
      "gelu" if hidden_act == "gelu" else "Text>gelu")
  model = teacher_loader.load_bert_pretrainer(checkpoint)
  features = _features()
  out = model(features)
  expected = _reference(params, hidden_act, features)
  for key in ("sequence_output", "pooled_output", "mlm_logits"):
    np.testing.assert_allclose(out[key].numpy(), expected[key], atol=1e-5,
                               rtol=0, err_msg=key)
  for got, want in zip(out["encoder_outputs"], expected["encoder_outputs"]):
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5, rtol=0)


@pytest.mark.parametrize("fixture,expected_format,hidden_act", _FORMATS)
def test_teacher_has_the_checkpoint_and_fresh_student_parts(
    request, params, fixture, expected_format, hidden_act):
  del expected_format
  path = request.getfixturevalue(fixture)
  teacher = teacher_loader.load_teacher(
      path, student_vocab_size=60, student_embedding_width=8,
      return_attention_scores=True)
  features = _features(vocab_ids=True)
  out = teacher(features)
  expected = _reference(params, hidden_act, features)
  np.testing.assert_allclose(out["sequence_output"].numpy(),
                             expected["sequence_output"], atol=1e-5, rtol=0)
  np.testing.assert_allclose(out["teacher_mlm_logits"].numpy(),
                             expected["mlm_logits"], atol=1e-5, rtol=0)
  assert out["student_mlm_logits"].shape == (2, 2, 60)
  assert len(out["attention_scores"]) == 2
  encoder = teacher.encoder_network
  assert encoder.get_student_embedding_table().shape == (60, 8)
  assert encoder.up_projection.kernel.shape == (8, 32)
  # Teacher-only input gives exactly the plain loaded encoder's output.
  plain = teacher_loader.load_bert_encoder(path)
  np.testing.assert_array_equal(out["sequence_output"].numpy(),
                                plain(features)["sequence_output"].numpy())


def test_hf_masked_lm_layout_without_pooler(tmp_path, params):
  # BertForMaskedLM: "bert." prefix, no pooler; the pooler stays fresh.
  state = testing_utils.hf_state_dict(params, prefix="bert.")
  state = {k: v for k, v in state.items() if ".pooler." not in k}
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  testing_utils.write_hf_checkpoint(str(tmp_path), params, _CONFIG)
  safetensors_numpy.save_file(state, os.path.join(tmp_path,
                                                  "model.safetensors"))
  checkpoint = teacher_loader.read_bert_checkpoint(str(tmp_path))
  assert checkpoint.has_mlm_head and not checkpoint.has_pooler
  model = teacher_loader.load_bert_pretrainer(checkpoint)
  features = _features()
  out = model(features)
  expected = _reference(params, "gelu", features)
  np.testing.assert_allclose(out["mlm_logits"].numpy(), expected["mlm_logits"],
                             atol=1e-5, rtol=0)


def test_head_is_fresh_when_the_checkpoint_has_none(tmp_path, params):
  no_head = {k: v for k, v in params.items() if not k.startswith("mlm_")}
  testing_utils.write_hf_checkpoint(str(tmp_path), no_head, _CONFIG)
  checkpoint = teacher_loader.read_bert_checkpoint(str(tmp_path))
  assert not checkpoint.has_mlm_head
  model = teacher_loader.load_bert_pretrainer(checkpoint)
  assert not np.any(model.masked_lm.bias.numpy())  # Zeros: initialized.


def test_gelu_means_what_each_format_means():
  hf = teacher_loader.encoder_config_from_bert_config(_CONFIG, "huggingface")
  google = teacher_loader.encoder_config_from_bert_config(_CONFIG, "google")
  assert (hf["inner_activation"], google["inner_activation"]) == (
      "gelu", "Text>gelu")
  assert hf["num_layers"] == 2 and hf["inner_dim"] == 64
  with pytest.raises(ValueError, match="received 'torch'"):
    teacher_loader.encoder_config_from_bert_config(_CONFIG, "torch")


def test_errors(tmp_path, hf_dir):
  with pytest.raises(ValueError, match="Cannot tell the checkpoint format"):
    teacher_loader.read_bert_checkpoint(str(tmp_path))
  with pytest.raises(ValueError, match=r"Cannot override \['num_layers'\]"):
    teacher_loader.load_bert_encoder(hf_dir, num_layers=3)
  checkpoint = teacher_loader.read_bert_checkpoint(hf_dir)
  checkpoint.encoder_config = dict(checkpoint.encoder_config, vocab_size=90)
  with pytest.raises(ValueError, match=r"word_embeddings .* shape \[100, 32\]; "
                     r"the model expects \[90, 32\]"):
    teacher_loader.load_bert_encoder(checkpoint)
  bad = dict(_CONFIG, layer_norm_eps=1e-5)
  testing_utils.write_hf_checkpoint(str(tmp_path / "eps"), {
      k: v for k, v in testing_utils.random_bert_params(_CONFIG).items()}, bad)
  with pytest.raises(ValueError, match="layer_norm_eps must be 1e-12"):
    teacher_loader.read_bert_checkpoint(str(tmp_path / "eps"))


def test_detect_checkpoint_format_dispatches_to_each_reader(
    tmp_path, hf_dir, google_dir):
  prefix = os.path.join(google_dir, "bert_model.ckpt")
  for path, expected in ((hf_dir, "huggingface"), (google_dir, "google"),
                         (prefix, "google")):
    assert teacher_loader.detect_checkpoint_format(path) == expected
    assert teacher_loader.read_bert_checkpoint(path).format == expected
  # A directory holding both is read as Hugging Face's.
  both = tmp_path / "both"
  shutil.copytree(hf_dir, both)
  shutil.copy(os.path.join(google_dir, "bert_config.json"), both)
  assert teacher_loader.detect_checkpoint_format(str(both)) == "huggingface"
  torch = tmp_path / "torch"
  torch.mkdir()
  (torch / "config.json").write_text("{}")
  (torch / "pytorch_model.bin").write_bytes(b"")
  with pytest.raises(ValueError, match="torch pickle"):
    teacher_loader.detect_checkpoint_format(str(torch))


def test_format_names_stay_importable_here():
  assert teacher_loader.BertCheckpoint is bert_checkpoint.BertCheckpoint
  assert teacher_loader.BERT_LARGE_CONFIG is (
      google_research.BERT_LARGE_CONFIG)
  assert (teacher_loader.HUGGINGFACE, teacher_loader.GOOGLE) == (
      "huggingface", "google")
  assert teacher_loader.assign_encoder_weights is (
      bert_checkpoint.assign_encoder_weights)


def _default_teacher_dir():
  from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
  try:
    return assets.default_teacher_dir()
  except FileNotFoundError as e:
    pytest.skip(str(e))


def test_default_teacher_matches_numpy_on_real_sentences():
  import tensorflow_text as tf_text  # pylint: disable=g-import-not-at-top
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  directory = _default_teacher_dir()
  with open(os.path.join(directory, "vocab.txt")) as f:
    vocab = [line.rstrip("\n") for line in f]
  tokenizer = tf_text.FastBertTokenizer(
      vocab=vocab, lower_case_nfd_strip_accents=True, token_out_type=tf.int32)
  sentences = ["Play some jazz music by Miles Davis in the kitchen.",
               "What's the weather like in Zürich tomorrow?",
               "Book a table for two at an Italian restaurant."]
  pieces = tokenizer.tokenize(tf.constant(sentences)).to_list()
  cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")
  assert vocab.index("[UNK]") not in sum(pieces, [])
  length = max(len(p) for p in pieces) + 2
  word_ids = np.zeros((len(sentences), length), np.int32)
  mask = np.zeros_like(word_ids)
  for i, p in enumerate(pieces):
    row = [cls_id] + p + [sep_id]
    word_ids[i, :len(row)] = row
    mask[i, :len(row)] = 1
  features = dict(input_word_ids=word_ids, input_mask=mask,
                  input_type_ids=np.zeros_like(word_ids),
                  input_vocab_ids=np.zeros_like(word_ids))

  teacher = teacher_loader.load_teacher(
      directory, student_vocab_size=4928, student_embedding_width=96)
  out = teacher.encoder_network(features)

  config = testing_utils.read_json(os.path.join(directory, "config.json"))
  params = testing_utils.params_from_hf_state_dict(safetensors_numpy.load_file(
      os.path.join(directory, "model.safetensors")))
  expected = testing_utils.numpy_bert_forward(
      params, config, word_ids, mask, hidden_act=config["hidden_act"])
  error = np.abs(out["sequence_output"].numpy() - expected["sequence_output"])
  assert error.max() < 1e-4, error.max()
  np.testing.assert_allclose(out["pooled_output"].numpy(),
                             expected["pooled_output"], atol=1e-4, rtol=0)
  assert teacher.encoder_network.get_student_embedding_table().shape == (
      4928, 96)
