"""Tests of the SNIPS fine-tuning task: first-piece loss, decoding, init."""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import errors
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.core import checkpointing

SEQ_LENGTH = 32


def _task(**kwargs):
  kwargs.setdefault("student_preset", None)
  kwargs.setdefault("num_layers", 1)
  kwargs.setdefault("hidden_size", 32)
  kwargs.setdefault("num_attention_heads", 2)
  return intent_slot_task.IntentSlotTask(seq_length=SEQ_LENGTH,
                                          eval_batch_size=8, **kwargs)


@pytest.fixture(scope="module")
def task_and_batch():
  task = _task()
  # SNIPS valid in file order: its first queries hold words of 2-5 pieces
  # ("relaxations", "playlist", "español").
  batch = next(iter(task.build_inputs(training=False)))
  return task, batch


@pytest.mark.large
def test_later_pieces_of_a_word_carry_no_loss(task_and_batch):
  task, batch = task_and_batch
  weights = batch["slot_weights"].numpy()
  real = batch["input_mask"].numpy() == 1
  later_pieces = real & (weights == 0)
  later_pieces[:, 0] = False  # [CLS]
  # The batch has words of several pieces (and so untagged real tokens).
  assert later_pieces.sum() >= 8
  model = task.build_model()
  outputs = model(batch, training=False)
  loss, _ = intent_slot_task.joint_intent_slot_loss(outputs, batch)

  # Any logits at untagged positions (later pieces, specials, padding), even
  # NaN, leave the loss as it is.
  untagged = (weights == 0)[..., None]
  noise = tf.where(untagged, 100.0 * tf.random.normal(
      outputs["slot_logits"].shape, seed=1), 0.0)
  changed = dict(outputs, slot_logits=outputs["slot_logits"] + noise)
  changed_loss, _ = intent_slot_task.joint_intent_slot_loss(changed, batch)
  assert float(changed_loss) == float(loss)
  with_nan = dict(outputs, slot_logits=tf.where(
      untagged, np.nan, outputs["slot_logits"]))
  nan_loss, _ = intent_slot_task.joint_intent_slot_loss(with_nan, batch)
  assert float(nan_loss) == float(loss)

  # The same change at one first piece does change it.
  first = np.argwhere(weights > 0)[0]
  bump = np.zeros(outputs["slot_logits"].shape, np.float32)
  bump[first[0], first[1], :] = np.arange(bump.shape[-1])
  bumped = dict(outputs, slot_logits=outputs["slot_logits"] + bump)
  assert float(intent_slot_task.joint_intent_slot_loss(bumped, batch)[0]) != (
      float(loss))

  # Through the task's loss on the model: no gradient reaches the slot
  # logits of later pieces, every first piece gets one.
  with tf.GradientTape() as tape:
    slot_logits = tf.identity(outputs["slot_logits"])
    tape.watch(slot_logits)
    task_loss, _ = intent_slot_task.joint_intent_slot_loss(
        dict(outputs, slot_logits=slot_logits), batch)
  grad = np.abs(tape.gradient(task_loss, slot_logits).numpy()).sum(-1)
  assert np.all(grad[weights == 0] == 0)
  assert np.all(grad[weights > 0] > 0)


def test_loss_is_mean_intent_ce_plus_mean_first_piece_slot_ce(task_and_batch):
  task, batch = task_and_batch
  model = task.build_model()
  outputs = model(batch, training=False)
  loss, metrics = task.compute_loss(model, batch, training=False)

  def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))

  intent = log_softmax(outputs["intent_logits"].numpy())
  intent_ce = -intent[np.arange(len(intent)), batch["intent_id"].numpy()]
  slots = log_softmax(outputs["slot_logits"].numpy())
  ids = batch["slot_ids"].numpy()
  first = batch["slot_weights"].numpy() > 0
  slot_ce = -np.take_along_axis(slots, np.maximum(ids, 0)[..., None], -1)[..., 0]
  expected = intent_ce.mean() + slot_ce[first].mean()
  np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
  assert metrics["slot/loss"].numpy()[1] == first.sum()
  assert metrics["intent/loss"].numpy()[1] == len(intent_ce)


def test_gold_predictions_decode_to_the_gold_word_tags(task_and_batch):
  task, _ = task_and_batch
  # Feed the gold labels as (one-hot) predictions through aggregate/reduce:
  # decoding the first pieces back to words must give every gold tag and
  # intent, with either decoding.
  state = None
  for batch in task.build_inputs(training=False).take(4):
    positions = batch["word_start_positions"].numpy()
    gold_ids = np.take_along_axis(np.maximum(batch["slot_ids"].numpy(), 0),
                                  np.maximum(positions, 0), axis=1)
    outputs = {
        "example_index": batch["example_index"].numpy(),
        "intent_predictions": batch["intent_id"].numpy(),
        "word_slot_logits": 10.0 * np.eye(task.labels.num_slots)[gold_ids],
        "word_start_positions": positions,
        "num_words": batch["num_words"].numpy(),
        "intent/loss": np.array([1.0, 2.0]),
    }
    state = task.aggregate_logs(state, outputs)
  results = task.reduce_aggregated_logs(state)
  assert results["num_examples"] == 32
  assert results["intent_accuracy"] == 1.0
  assert results["slot_f1"] == 1.0
  assert results["slot_f1_argmax"] == results["slot_f1_viterbi"] == 1.0
  assert results["sentence_accuracy"] == 1.0
  assert results["intent/loss"] == 4.0 / 8.0
  # The answers kept beside a best checkpoint: the gold ones here, in split
  # order, in the predictor's fields.
  answers = task.eval_answers(state)
  valid = task.examples("valid")
  assert [i for i, _ in answers] == list(range(32))
  assert [a["intent"] for _, a in answers] == list(valid.intents[:32])
  assert [a["tags"] for _, a in answers] == [list(t) for t in valid.tags[:32]]


def test_labels_and_splits(tmp_path):
  task = _task()
  labels = task.labels
  assert (labels.num_intents, labels.num_slots) == (7, 72)
  task.write_assets(str(tmp_path))
  from_file = _task(labels_file=str(tmp_path / intent_slot_task.LABELS_FILE))
  assert from_file.labels == labels
  assert intent_slot_task.intent_slot_train_steps(epochs=1) == round(13084 / 64)
  with pytest.raises(ValueError, match="eval_split .* received 'dev'"):
    _task(eval_split="dev")
  # The built-in copy has no test split: reported before training.
  assert "intent-and-slot test" in _task(eval_split="test").missing_files()
  # A directory without the data contract's files: one clear error.
  with pytest.raises(errors.DataError, match="train"):
    _task(dataset=catalog.intent_slot("files", str(tmp_path))).missing_files()
  with pytest.raises(ValueError, match="split must be one of"):
    _task().examples("validation")
  assert "SNIPS from the built-in copy" in _task().describe()


def _student_checkpoint(directory, vocab_tokens, num_layers=2, hidden=32,
                        heads=2):
  encoder = networks.build_student_encoder(
      None, vocab_size=len(vocab_tokens), num_layers=num_layers,
      hidden_size=hidden, num_attention_heads=heads, max_sequence_length=64)
  metadata = checkpointing.make_metadata(
      "nokd", {"student": text_lib.vocab_fingerprint(vocab_tokens)})
  # As a student MLM task saves it: the variables live under model/, and
  # `student_encoder` is a second name of the same object.
  path = tf.train.Checkpoint(
      model=models.MLMPretrainer(encoder), student_encoder=encoder,
      metadata=metadata).save(directory + "/ckpt")
  return encoder, path


def test_starts_from_a_student_checkpoint_of_any_size(tmp_path):
  tokens = text_lib.load_vocab(assets.default_student_vocab())
  encoder, path = _student_checkpoint(str(tmp_path), tokens, num_layers=3,
                                      hidden=48, heads=3)
  config = finetune_task.encoder_config_from_checkpoint(path)
  assert (config["num_layers"], config["hidden_size"],
          config["num_attention_heads"], config["inner_dim"],
          config["max_sequence_length"]) == (3, 48, 3, 192, 64)
  # The preset is ignored: the checkpoint's sizes win.
  task = intent_slot_task.IntentSlotTask(init_checkpoint=str(tmp_path),
                                          seq_length=SEQ_LENGTH)
  assert task.missing_files() == {}
  model = task.build_model()
  task.initialize(model)
  for expected, actual in zip(encoder.weights, model.encoder_network.weights):
    np.testing.assert_array_equal(expected.numpy(), actual.numpy())
  assert task.report_name().startswith("3x48 student")


def test_refuses_a_checkpoint_of_another_vocabulary(tmp_path):
  tokens = text_lib.load_vocab(assets.default_student_vocab())
  other = tokens[:-1] + ["zzzz"]
  _student_checkpoint(str(tmp_path), other)
  task = intent_slot_task.IntentSlotTask(init_checkpoint=str(tmp_path),
                                          seq_length=SEQ_LENGTH)
  model = task.build_model()
  with pytest.raises(checkpointing.VocabularyMismatchError,
                     match="different student vocabulary"):
    task.initialize(model)


def test_bad_sources_say_what_was_received(tmp_path):
  with pytest.raises(ValueError, match="not both"):
    intent_slot_task.IntentSlotTask(init_checkpoint="a",
                                     teacher_checkpoint="b")
  missing = intent_slot_task.IntentSlotTask(
      init_checkpoint=str(tmp_path / "none")).missing_files()
  assert "init checkpoint" in missing
  tf.train.Checkpoint(other=tf.Variable(1.0)).save(str(tmp_path / "ckpt"))
  with pytest.raises(ValueError, match="no encoder under 'student_encoder'"):
    finetune_task.encoder_config_from_checkpoint(
        checkpointing.resolve_checkpoint(str(tmp_path)))


def _write_goo(directory, queries, tags, intents):
  directory.mkdir(parents=True)
  for name, lines in (("seq.in", queries), ("seq.out", tags),
                      ("label", intents)):
    (directory / name).write_text("\n".join(lines) + "\n")


@pytest.mark.large
def test_a_users_data_with_labels_train_lacks_trains_and_evaluates(tmp_path):
  _write_goo(tmp_path / "train", ["play jazz", "play some rock music",
                                  "book a table", "book two seats"] * 4,
             ["O B-genre", "O O B-genre O", "O O O", "O B-count O"] * 4,
             ["Play", "Play", "Book", "Book"] * 4)
  # dev/ (not valid/): a new intent and a new slot type, as real data has.
  _write_goo(tmp_path / "dev", ["play jazz", "rate this book",
                                "book a table at noon"],
             ["O B-genre", "O O B-object", "O O O O B-time"],
             ["Play", "Rate", "Book"])
  dataset = catalog.intent_slot("files", str(tmp_path))
  task = _task(dataset=dataset, global_batch_size=4)
  assert task.missing_files() == {}
  assert task.labels.intents == ("Book", "Play")
  assert task.num_train_examples() == 16
  assert intent_slot_task.intent_slot_train_steps(
      epochs=2, global_batch_size=4, dataset=dataset) == 8
  assert f"the intent-and-slot dataset {tmp_path}" in task.describe()
  model = task.build_model()
  batch = next(iter(task.build_inputs(training=True)))
  loss, _ = task.compute_loss(model, batch, training=True)
  assert np.isfinite(float(loss))
  from mixvocab_tf.core import evaluation  # pylint: disable=g-import-not-at-top
  results = evaluation.evaluate(task, model)
  assert results["num_examples"] == 3
  # 'Rate' cannot be predicted: at most 2 of 3 intents are right, and the
  # evaluation loss stays finite.
  assert results["intent_accuracy"] <= 2 / 3
  assert np.isfinite(results["intent/loss"])


def test_snips_as_a_users_directory_is_the_built_in_snips():
  # One path: SNIPS given as a user's Goo-layout directory reads the same
  # examples, labels and ids as the built-in copy, so it trains the same.
  shared = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..",
                        "shared", "data", "snips")
  if not os.path.isdir(shared):
    pytest.skip("../shared/data/snips is not here")
  user = _task(dataset=catalog.intent_slot("files", shared))
  built_in = _task()
  assert user.labels == built_in.labels
  for split in ("train", "valid"):
    a, b = user.examples(split), built_in.examples(split)
    assert (a.words, a.tags, a.intents) == (b.words, b.tags, b.intents)


@pytest.mark.parametrize("bucket_boundaries", [None, (12, 16, 20)])
def test_evaluation_batches_are_the_one_by_one_featurizers(bucket_boundaries):
  # The split is featurized once, a batch of queries at a time; each
  # evaluation's batches hold what mapping the one-by-one featurizer gave
  # (with buckets: in batches of near-equal lengths, each cut to its
  # longest query).
  from mixvocab_tf.tasks.finetuning import batch_padding  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.tasks.finetuning.intent_slot import data  # pylint: disable=g-import-not-at-top
  task = _task(bucket_boundaries=bucket_boundaries)
  featurize = data.intent_slot_featurizer(task.tokens, SEQ_LENGTH)
  expected = list(task.with_example_index(data.make_intent_slot_dataset(
      task.examples("valid"), task.labels)).map(
          lambda e: dict(featurize(e), example_index=e["example_index"])))
  for _ in range(2):  # The second evaluation reads the kept features.
    batches = list(task.build_inputs(training=False))
    assert len(batches) == 88
    order = np.concatenate([b["example_index"] for b in batches])
    assert sorted(order) == list(range(len(expected)))
    if not bucket_boundaries:
      np.testing.assert_array_equal(order, np.arange(len(expected)))
    rows = (dict(zip(batch, values)) for batch in batches
            for values in zip(*batch.values()))
    for got in rows:
      want = expected[got["example_index"]]
      assert sorted(got) == sorted(want)
      length = len(got["input_mask"])  # Only padding is cut.
      assert not np.any(want["input_mask"][length:])
      for key in want:
        value = got[key]
        want_value = (want[key][:length] if key in
                      batch_padding.TOKEN_AXIS_KEYS else want[key])
        assert value.dtype == want_value.dtype, key
        np.testing.assert_array_equal(value, want_value, err_msg=key)
