"""Tests of SNIPS distillation across vocabularies and its teacher-output cache.

A tiny random teacher (2 layers x 32, the default teacher's 30,522-token
vocabulary) stands in for the fine-tuned teacher; SNIPS is a slice of the real
train and valid splits.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import text as text_lib
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import slot_values
from mixvocab_tf.tasks.distillation import distill_intent_slot
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.text import wordpiece
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.core import checkpointing
from mixvocab_testing import trainer_testing as testing

SEQ_LENGTH = 32
#: One WordPiece in the teacher's vocabulary, three in the shipped student's.
SPLIT_WORD = "restaurant"


def _write_split(directory, lines):
  os.makedirs(directory, exist_ok=True)
  for name, column in (("seq.in", 0), ("seq.out", 1), ("label", 2)):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
      f.write("".join(line[column] + "\n" for line in lines))


def _snips_slice(directory, train_size=24, valid_size=8):
  """Real SNIPS queries: train ones with SPLIT_WORD first, then others."""
  def read(split):
    examples = intent_slot_files.read_intent_slot(assets.snips_dir(split))
    return [(" ".join(w), " ".join(t), i) for w, t, i in zip(
        examples.words, examples.tags, examples.intents)]
  train = read("train")
  with_word = [l for l in train if SPLIT_WORD in l[0].split()][:4]
  others = [l for l in train if l not in with_word]
  # Every intent at least once, so the labels of train cover valid.
  by_intent = {}
  for line in others:
    by_intent.setdefault(line[2], line)
  chosen = with_word + list(by_intent.values())
  chosen += [l for l in others if l not in chosen][:train_size - len(chosen)]
  _write_split(os.path.join(directory, "train"), chosen)
  _write_split(os.path.join(directory, "valid"), read("valid")[:valid_size])
  return directory


def _write_teacher_run(run_dir, teacher_dir, data_dir, seed=0):
  """A `intent_slot` teacher run (random heads) as the trainer saves it."""
  tf.keras.utils.set_random_seed(seed)
  task = intent_slot_task.IntentSlotTask(
      teacher_checkpoint=teacher_dir,
      dataset=catalog.intent_slot("snips", data_dir), seq_length=SEQ_LENGTH)
  model = task.build_model()
  task.initialize(model)
  if seed:  # Another fine-tuning: other head weights.
    kernel = model.slot_classifier.kernel
    kernel.assign(kernel + 0.1)
  checkpointing.RunCheckpoint(
      run_dir, {"model": model}, task_name="intent_slot",
      vocab_fingerprints=task.vocab_fingerprints()).save(1)
  task.write_assets(run_dir)
  return model


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
  root = tmp_path_factory.mktemp("distill")
  data_dir = _snips_slice(str(root / "snips"))
  teacher_dir = testing.write_tiny_teacher(str(root / "teacher"))
  run_dir = str(root / "teacher_run")
  teacher = _write_teacher_run(run_dir, teacher_dir, data_dir)
  return dict(root=root, data_dir=data_dir, teacher_dir=teacher_dir,
              run_dir=run_dir, teacher=teacher)


def _task(setup, **kwargs):
  kwargs.setdefault("student_preset", None)
  if "teacher_checkpoint" not in kwargs:
    kwargs.setdefault("num_layers", 1)
    kwargs.setdefault("hidden_size", 32)
    kwargs.setdefault("num_attention_heads", 2)
  return distill_intent_slot.DistillIntentSlotTask(
      teacher_run=setup["run_dir"], teacher_base=setup["teacher_dir"],
      dataset=catalog.intent_slot("snips", setup["data_dir"]),
      seq_length=SEQ_LENGTH,
      teacher_seq_length=SEQ_LENGTH, global_batch_size=24,
      pad_to_longest=True, **{"shuffle_buffer": 32, **kwargs})


@pytest.mark.large
def test_word_split_differently_gets_teacher_distribution_at_first_piece(
    setup):
  task = _task(setup, cache_dir=str(setup["root"] / "cache_align"))
  teacher_ids = wordpiece.fast_bert_tokenizer(
      assets.default_teacher_vocab())[0].tokenize([SPLIT_WORD])
  student_ids = wordpiece.fast_bert_tokenizer(
      task.vocab_path)[0].tokenize([SPLIT_WORD])
  assert teacher_ids.row_lengths().numpy()[0] == 1
  assert student_ids.row_lengths().numpy()[0] >= 2

  outputs = task.teacher_outputs()
  batch = next(iter(task.build_inputs(training=True)))
  examples = intent_slot_files.read_intent_slot(os.path.join(setup["data_dir"], "train"))
  length = batch["input_word_ids"].shape[1]
  assert length < SEQ_LENGTH  # Padded to the longest query of the batch.
  targets, weights = distill_intent_slot.scatter_word_targets(
      batch["teacher_slot_logits"], batch["teacher_slot_valid"],
      batch["word_start_positions"], length)
  targets, weights = targets.numpy(), weights.numpy()
  # Where the distillation target goes is where the slot loss goes.
  np.testing.assert_array_equal(weights, batch["slot_weights"].numpy())

  featurize = intent_slot_data.intent_slot_featurizer(assets.default_teacher_vocab(),
                                          SEQ_LENGTH)
  checked = 0
  for row, index in enumerate(batch["example_index"].numpy()):
    words = examples.words[index]
    if SPLIT_WORD not in words:
      continue
    w = words.index(SPLIT_WORD)
    p = int(batch["word_start_positions"][row, w])
    teacher_word = outputs.slot_logits[outputs.row_splits[index] + w]
    # The teacher's logits of that word, at its first student piece ...
    np.testing.assert_array_equal(targets[row, p], teacher_word)
    assert weights[row, p] == 1
    # ... and nowhere else: not at its later pieces, nor at other words'.
    assert weights[row, p + 1] == 0 and weights[row, p + 2] == 0
    others = np.delete(np.arange(length), p)
    assert not np.any(np.all(np.isclose(targets[row, others], teacher_word),
                             axis=-1))
    # The cached logits are the teacher's at its own first piece of the word
    # (in inference mode, without padding to another length).
    features = featurize(dict(
        words=tf.constant(words), intent_id=tf.constant(0),
        slot_labels=tf.zeros([len(words)], tf.int32)))
    direct = setup["teacher"](
        {k: features[k][None] for k in intent_slot_data.MODEL_INPUT_KEYS},
        training=False)
    tp = int(features["word_start_positions"][w])
    np.testing.assert_allclose(direct["slot_logits"][0, tp], teacher_word,
                               atol=1e-5)
    np.testing.assert_allclose(direct["intent_logits"][0],
                               outputs.intent_logits[index], atol=1e-5)
    checked += 1
  assert checked >= 1

  # Through the loss: the distillation gradient reaches a student's slot
  # logits only at first pieces.
  slot_logits = tf.random.normal([targets.shape[0], length,
                                  targets.shape[2]], seed=3)
  with tf.GradientTape() as tape:
    tape.watch(slot_logits)
    _, (slot_sum, _) = distill_intent_slot.distillation_terms(
        dict(slot_logits=slot_logits,
             intent_logits=batch["teacher_intent_logits"]), batch, 2.0)
  grad = np.abs(tape.gradient(slot_sum, slot_logits).numpy()).sum(-1)
  assert np.all(grad[weights == 0] == 0)
  assert np.all(grad[weights > 0] > 0)


@pytest.mark.large
def test_student_identical_to_teacher_has_zero_distillation_loss(setup):
  # The student: the teacher's architecture and vocabulary ...
  task = _task(setup, teacher_checkpoint=setup["teacher_dir"],
               cache_dir=str(setup["root"] / "cache_same"), temperature=2.0,
               hard_label_weight=0.0)
  student = task.build_model()
  # ... and its fine-tuned weights.
  student.set_weights(setup["teacher"].get_weights())
  for batch in task.build_inputs(training=True).take(2):
    outputs = student(batch, training=False)
    (intent_sum, queries), (slot_sum, words) = (
        distill_intent_slot.distillation_terms(outputs, batch, 2.0))
    assert float(queries) == 24 and float(words) > 24
    assert abs(float(intent_sum)) < 1e-4
    assert abs(float(slot_sum)) < 1e-4
    loss, metrics = task.compute_loss(student, batch, training=False)
    assert abs(float(loss)) < 1e-4
    assert "distill/slot_kl" in metrics
  # A student that differs has a positive one.
  outputs = task.build_model()(batch, training=False)
  _, (slot_sum, _) = distill_intent_slot.distillation_terms(outputs, batch, 2.0)
  assert float(slot_sum) > 1e-2


@pytest.mark.large
def test_stale_cache_is_refused(setup, tmp_path):
  cache_dir = str(tmp_path / "cache")
  task = _task(setup, cache_dir=cache_dir)
  first = task.teacher_outputs()
  assert task.cache_build_seconds is not None
  assert teacher_cache.exists(cache_dir)
  # Read again, not recomputed.
  again = _task(setup, cache_dir=cache_dir)
  np.testing.assert_array_equal(again.teacher_outputs().slot_logits,
                                first.slot_logits)
  assert again.cache_build_seconds is None

  # Another student vocabulary.
  other_vocab = str(tmp_path / "vocab.txt")
  tokens = text_lib.load_vocab(assets.default_student_vocab())
  with open(other_vocab, "w", encoding="utf-8") as f:
    f.write("\n".join(tokens[:-1]) + "\n")
  with pytest.raises(teacher_cache.StaleCacheError, match="student_vocab"):
    _task(setup, cache_dir=cache_dir, vocab=other_vocab).teacher_outputs()

  # Another teacher: the teacher run fine-tuned further.
  run_dir = str(tmp_path / "teacher_run")
  _write_teacher_run(run_dir, setup["teacher_dir"], setup["data_dir"],
                     seed=1)
  moved = distill_intent_slot.DistillIntentSlotTask(
      teacher_run=run_dir, teacher_base=setup["teacher_dir"],
      dataset=catalog.intent_slot("snips", setup["data_dir"]),
      seq_length=SEQ_LENGTH,
      teacher_seq_length=SEQ_LENGTH, cache_dir=cache_dir,
      student_preset=None, num_layers=1, hidden_size=32,
      num_attention_heads=2)
  with pytest.raises(teacher_cache.StaleCacheError,
                     match="teacher_checkpoint"):
    moved.teacher_outputs()
  # The refused cache is left as it was.
  assert teacher_cache.read_fingerprint(cache_dir)["teacher_checkpoint"] == (
      first.fingerprint["teacher_checkpoint"])


@pytest.mark.large
def test_hidden_state_distillation_by_word(setup):
  task = _task(setup, cache_dir=str(setup["root"] / "cache_hidden"),
               hidden_kd_weight=1.0)
  outputs = task.teacher_outputs()
  assert outputs.word_hidden.shape == (outputs.slot_logits.shape[0], 32)
  assert outputs.fingerprint["with_hidden"]
  # The cached hidden state of a word is the teacher's at its first piece.
  examples = intent_slot_files.read_intent_slot(os.path.join(setup["data_dir"], "train"))
  featurize = intent_slot_data.intent_slot_featurizer(assets.default_teacher_vocab(),
                                          SEQ_LENGTH)
  words = examples.words[0]
  features = featurize(dict(words=tf.constant(words), intent_id=tf.constant(0),
                            slot_labels=tf.zeros([len(words)], tf.int32)))
  encoded = setup["teacher"].encoder_network(
      {k: features[k][None] for k in intent_slot_data.MODEL_INPUT_KEYS},
      training=False)["sequence_output"][0].numpy()
  positions = features["word_start_positions"].numpy()[:len(words)]
  np.testing.assert_allclose(
      outputs.word_hidden[:len(words)].astype(np.float32),
      encoded[positions], atol=2e-2, rtol=1e-2)

  model = task.build_model()
  batch = next(iter(task.build_inputs(training=True)))
  variables = task.trainable_variables(model)
  assert len(variables) == len(model.trainable_variables) + 2
  assert "kd_hidden_projection" in task.checkpoint_items(model)
  with tf.GradientTape() as tape:
    loss, metrics = task.compute_loss(model, batch, training=True)
  assert float(metrics["distill/hidden_mse"][0]) > 0
  grads = tape.gradient(loss, variables)
  assert all(g is not None for g in grads[-2:])


@pytest.mark.large
def test_precomputed_features_give_the_same_batches(setup):
  kwargs = dict(cache_dir=str(setup["root"] / "cache_align"),
                bucket_boundaries=[12, 16, 20])
  on_the_fly = iter(_task(setup, precompute_features=False,
                          **kwargs).build_inputs(training=True))
  precomputed = iter(_task(setup, **kwargs).build_inputs(training=True))
  for _ in range(4):
    a, b = next(on_the_fly), next(precomputed)
    assert sorted(a) == sorted(b)
    for key in a:
      np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("kwargs", [
    dict(bucket_boundaries=[12, 16, 20]),
    dict(bucket_boundaries=None),
])
@pytest.mark.large
def test_precomputed_batches_resume_exactly(setup, kwargs, tmp_path):
  # Its own cache: the transfer set (with copies) is not the other tests'.
  kwargs = dict(kwargs, cache_dir=str(setup["root"] / "cache_resume"),
                augment_copies=1)
  iterator = iter(_task(setup, **kwargs).build_inputs(training=True))
  for _ in range(3):  # Into the second pass over the 48 examples.
    next(iterator)
  path = tf.train.Checkpoint(input=iterator).save(str(tmp_path / "ckpt"))
  expected = [next(iterator) for _ in range(3)]
  resumed = iter(_task(setup, **kwargs).build_inputs(training=True))
  tf.train.Checkpoint(input=resumed).read(
      path).assert_existing_objects_matched()
  for want in expected:
    got = next(resumed)
    assert sorted(got) == sorted(want)
    for key in want:
      np.testing.assert_array_equal(got[key], want[key])


@pytest.mark.large
def test_the_augmented_transfer_set_is_shuffled_as_a_whole(setup):
  # 24 queries then 2 copies of each (indices 24-47, 48-71). A 4-example
  # buffer would give a first batch of originals and copy 1 only.
  task = _task(setup, cache_dir=str(setup["root"] / "cache_aug"),
               augment_copies=2, shuffle_buffer=4)
  first = next(iter(task.build_inputs(training=True)))
  indices = first["example_index"].numpy()
  assert len(indices) == 24 and indices.max() >= 48, indices


@pytest.mark.large
def test_unlabelled_queries_carry_soft_labels_only(setup, tmp_path):
  logs = tmp_path / "logs.txt"
  logs.write_text("play some jazz\n\nbook a  table\nplay some jazz\n",
                  encoding="utf-8")
  task = _task(setup, cache_dir=str(tmp_path / "cache"), augment_copies=1,
               unlabelled=str(logs))
  examples = task.train_examples()
  # Train (24), its copies (24), then each distinct query once.
  assert len(examples) == 50
  assert examples.words[48:] == [["play", "some", "jazz"],
                                 ["book", "a", "table"]]
  assert examples.intents[48:] == [intent_slot_data.UNLABELLED] * 2
  assert "_unlabelled" in task.cache_dir
  outputs = task.teacher_outputs()
  assert len(outputs.fingerprint) and task.num_train_examples() == 50
  seen = set()
  student = task.build_model()
  for batch in task.build_inputs(training=True).take(6):
    index = batch["example_index"].numpy()
    unlabelled = index >= 48
    seen.update(index[unlabelled].tolist())
    # No gold labels: no hard loss, but the teacher's words to learn.
    intent = batch["intent_id"].numpy()
    assert (intent[unlabelled] == intent_slot_data.IGNORE_ID).all()
    assert (batch["slot_weights"].numpy()[unlabelled] == 0).all()
    assert (batch["teacher_slot_valid"].numpy()[unlabelled].sum(axis=1)
            == [len(examples.words[i]) for i in index[unlabelled]]).all()
    assert (intent[~unlabelled] >= 0).all()
    loss, _ = task.compute_loss(student, batch, training=False)
    assert np.isfinite(float(loss))
  assert seen == {48, 49}


def test_evaluation_reports_both_decodings(setup):
  from mixvocab_tf.core import evaluation  # pylint: disable=g-import-not-at-top
  task = _task(setup, cache_dir=str(setup["root"] / "cache_align"))
  results = evaluation.evaluate(task, task.build_model())
  assert 0.0 <= results["slot_f1_viterbi"] <= 1.0
  assert 0.0 <= results["slot_f1_argmax"] <= 1.0
  assert results["slot_f1"] == results["slot_f1_viterbi"]
  assert results["num_examples"] == 8


def test_slot_values_join_the_copies_and_name_the_cache(setup, tmp_path):
  train = intent_slot_files.read_intent_slot(
      os.path.join(setup["data_dir"], "train"))
  kind = sorted(slot_values.slot_types(train.tags))[0]
  values = tmp_path / "values"
  values.mkdir()
  (values / f"{kind}.txt").write_text("zyzzyva\n", encoding="utf-8")
  task = _task(setup, augment_copies=3, augment_p=1.0,
               slot_values=str(values))
  assert "_values" in task.cache_dir
  assert task.cache_dir != _task(setup, augment_copies=3,
                                 augment_p=1.0).cache_dir
  copies = task.train_examples().words[len(train.words):]
  assert any("zyzzyva" in words for words in copies)
  (values / "not_a_slot_type.txt").write_text("x\n", encoding="utf-8")
  with pytest.raises(errors.DataError, match="no slot type 'not_a_slot_type'"):
    _task(setup, augment_copies=3, slot_values=str(values))
