"""Tests of where a fine-tuning task's encoder config comes from."""

from unittest import mock

import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import checkpointing
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning import finetune_task


def _student_run(directory, with_config, **sizes):
  """A student MLM run: the checkpoint, and its encoder_config.json or not."""
  tokens = text_lib.load_vocab(assets.default_student_vocab())
  config = networks.student_encoder_config(
      None, vocab_size=len(tokens), max_sequence_length=64,
      return_word_embeddings=True, **sizes)
  encoder = networks.PlainBertEncoder(**config)
  metadata = checkpointing.make_metadata(
      "nokd", {"student": text_lib.vocab_fingerprint(tokens)})
  path = tf.train.Checkpoint(
      model=models.MLMPretrainer(encoder), student_encoder=encoder,
      metadata=metadata).save(directory + "/ckpt")
  if with_config:
    checkpointing.write_encoder_configs(
        directory, {finetune_task.STUDENT_ENCODER_KEY: encoder.get_config()})
  return encoder, path


def test_the_config_beside_the_checkpoint_is_used_instead_of_the_walk(
    tmp_path):
  # An activation the variable shapes cannot tell: only the JSON knows it.
  encoder, path = _student_run(str(tmp_path), True, num_layers=3,
                               hidden_size=48, num_attention_heads=3,
                               inner_activation="relu")
  with mock.patch.object(finetune_task, "encoder_config_from_checkpoint",
                         side_effect=AssertionError("walked the graph")):
    config = finetune_task.encoder_config_from_run(path, output_dropout=0.0)
    task = intent_slot_task.IntentSlotTask(init_checkpoint=str(tmp_path),
                                            seq_length=32)
    model = task.build_model()
  assert (config["num_layers"], config["hidden_size"],
          config["num_attention_heads"], config["inner_activation"],
          config["output_dropout"]) == (3, 48, 3, "relu", 0.0)
  # Fine-tuning reads the sequence and pooled outputs only.
  assert not config["return_word_embeddings"]
  assert model.encoder_network.get_config()["inner_activation"] == "relu"
  task.initialize(model)
  for expected, actual in zip(encoder.weights, model.encoder_network.weights):
    assert (expected.numpy() == actual.numpy()).all()


def test_without_a_config_the_sizes_come_from_the_variables(tmp_path):
  _, path = _student_run(str(tmp_path), False, num_layers=2, hidden_size=32,
                         num_attention_heads=2)
  assert checkpointing.read_encoder_config(path, "student_encoder") is None
  config = finetune_task.encoder_config_from_run(path)
  walked = finetune_task.encoder_config_from_checkpoint(path)
  assert config.keys() == walked.keys()
  assert all(config[k] == walked[k] for k in config if k != "initializer")
  assert (config["num_layers"], config["hidden_size"]) == (2, 32)


def test_a_run_without_the_encoder_says_what_it_holds(tmp_path):
  tf.train.Checkpoint(other=tf.Variable(1.0)).save(str(tmp_path / "ckpt"))
  with pytest.raises(ValueError, match="no encoder under 'student_encoder'"):
    finetune_task.encoder_config_from_run(
        checkpointing.resolve_checkpoint(str(tmp_path)))


def test_a_fine_tuning_run_describes_its_encoder(tmp_path):
  _, path = _student_run(str(tmp_path), True, num_layers=2, hidden_size=32,
                         num_attention_heads=2)
  task = intent_slot_task.IntentSlotTask(init_checkpoint=path, seq_length=32)
  model = task.build_model()
  config = task.encoder_configs(model)[finetune_task.FINETUNED_ENCODER_KEY]
  rebuilt = networks.PlainBertEncoder(**config)
  assert rebuilt.count_params() == model.encoder_network.count_params()
