"""Tests of evaluation during training and of the best checkpoint."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import base_task
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib


class _ScriptedTask(base_task.Task):
  """Regression whose validation score is read from a script, in order."""

  task_name = "scripted"
  best_metric = "score"
  report_metrics = ("score",)

  def __init__(self, scores):
    super().__init__(global_batch_size=4)
    self.scores = list(scores)

  def build_model(self):
    inputs = tf_keras.Input((2,))
    return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(inputs))

  def build_inputs(self, input_context=None, training=True):
    x = np.arange(24, dtype=np.float32).reshape(12, 2) / 10.0
    dataset = tf.data.Dataset.from_tensor_slices({"x": x, "y": x.sum(-1)})
    if training:
      dataset = dataset.repeat()
    return dataset.batch(4, drop_remainder=training)

  def compute_loss(self, model, features, training):
    error = model(features["x"], training=training)[:, 0] - features["y"]
    total = tf.reduce_sum(tf.square(error))
    count = tf.cast(tf.shape(error)[0], tf.float32)
    return total / base_task.global_sum(count), {
        "mse": base_task.metric(total, count)}

  def reduce_aggregated_logs(self, state):
    results = super().reduce_aggregated_logs(state)
    results["score"] = self.scores.pop(0)
    return results

  def vocab_fingerprints(self):
    return {"student": "c" * 64}


class _AnsweringTask(_ScriptedTask):
  """A scripted task that answers each of its 12 examples with its score."""

  def reduce_aggregated_logs(self, state):
    results = super().reduce_aggregated_logs(state)
    self.answer = f"score {results['score']}"
    return results

  def eval_answers(self, state):
    del state  # The answer is the evaluation's score.
    return [(i, {"label": self.answer}) for i in reversed(range(12))]


def _trainer(model_dir, scores, train_steps, task_class=_ScriptedTask,
             **kwargs):
  return trainer_lib.Trainer(
      model_dir=model_dir, task=task_class(scores), train_steps=train_steps,
      log_every=2, checkpoint_every=2, keep_checkpoints=5, evaluate_every=2,
      **kwargs,
      optimization=optimization.optimization_config(
          train_steps=train_steps, learning_rate=0.05, warmup_fraction=0.0))


def _kernel(path):
  reader = tf.train.load_checkpoint(path)
  name = [k for k in reader.get_variable_to_shape_map()
          if k.startswith("model/") and "kernel" in k and "OPTIMIZER" not in k]
  return reader.get_tensor(name[0])


def test_keeps_the_best_checkpoint_across_a_resume(tmp_path):
  model_dir = str(tmp_path)
  trainer = _trainer(model_dir, [0.5, 0.7, 0.6], train_steps=6)
  trainer.train()
  assert [r["step"] for r in trainer.eval_results] == [2, 4, 6]
  assert [r["is_best"] for r in trainer.eval_results] == [True, True, False]
  best = evaluation.BEST_DIR
  record = json.load(open(os.path.join(model_dir, best, "metrics.json")))
  assert record["step"] == 4 and record["metrics"]["score"] == 0.7
  assert record["checkpoint"] == "ckpt-4"
  assert record["markdown_row"].endswith("| 70.00 |")
  # The best checkpoint holds the weights of step 4, not the latest ones.
  best_path = checkpointing.resolve_checkpoint(os.path.join(model_dir, best))
  np.testing.assert_array_equal(
      _kernel(best_path), _kernel(os.path.join(model_dir, "ckpt-4")))
  assert not np.array_equal(_kernel(best_path),
                            _kernel(os.path.join(model_dir, "ckpt-6")))
  latest = json.load(open(os.path.join(model_dir, "metrics.json")))
  assert latest["step"] == 6 and latest["metrics"]["mse"] >= 0
  history = open(os.path.join(model_dir, "eval", "history.jsonl")).readlines()
  assert len(history) == 3
  # A resumed run competes with the best of the earlier part.
  resumed = _trainer(model_dir, [0.65, 0.9], train_steps=10)
  resumed.train()
  assert [r["is_best"] for r in resumed.eval_results] == [False, True]
  record = json.load(open(os.path.join(model_dir, best, "metrics.json")))
  assert record["step"] == 10
  # The best checkpoint restores into a fresh model.
  task = _ScriptedTask([])
  model = task.build_model()
  evaluation.restore_model(task, model, os.path.join(model_dir, best))
  np.testing.assert_array_equal(model.weights[0].numpy(),
                                resumed.model.weights[0].numpy())


def test_the_best_evaluations_answers_are_kept_beside_it(tmp_path):
  model_dir = str(tmp_path)
  path = os.path.join(model_dir, evaluation.BEST_DIR, evaluation.ANSWERS_JSONL)
  _trainer(model_dir, [0.5, 0.7, 0.6], train_steps=6,
           task_class=_AnsweringTask).train()
  # Step 4's (the best), not step 6's, in the split's order.
  assert evaluation.read_answers(path, 12) == [{"label": "score 0.7"}] * 12
  # Answers of another number of examples (a partial evaluation, a split
  # changed since) are none.
  assert evaluation.read_answers(path, 11) is None
  assert evaluation.read_answers(path + ".missing", 12) is None
  # A task without answers writes none.
  _trainer(str(tmp_path / "plain"), [0.5], train_steps=2).train()
  assert not os.path.exists(os.path.join(
      str(tmp_path / "plain"), evaluation.BEST_DIR, evaluation.ANSWERS_JSONL))
  # evaluate() writes them on request.
  task = _AnsweringTask([0.25])
  evaluation.evaluate(task, task.build_model(),
                      answers_path=str(tmp_path / "a.jsonl"))
  assert evaluation.read_answers(str(tmp_path / "a.jsonl"), 12) == [
      {"label": "score 0.25"}] * 12
  with pytest.raises(ValueError, match="no answers per example"):
    plain = _ScriptedTask([0.25])
    evaluation.evaluate(plain, plain.build_model(),
                        answers_path=str(tmp_path / "b.jsonl"))


def test_early_stopping_after_patience_evaluations_without_a_best(tmp_path):
  model_dir = str(tmp_path)
  # Best at step 4; steps 6 and 8 do not beat it: patience 2 stops at 8.
  trainer = _trainer(model_dir, [0.5, 0.7, 0.6, 0.7, 0.99], train_steps=20,
                     early_stopping_patience=2)
  trainer.train()
  assert [r["step"] for r in trainer.eval_results] == [2, 4, 6, 8]
  assert trainer.stopped_early_at == 8
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")
  record = json.load(open(os.path.join(model_dir, "best", "metrics.json")))
  assert record["step"] == 4
  stopped = json.load(open(os.path.join(model_dir, "early_stopping.json")))
  assert (stopped["step"], stopped["best_step"]) == (8, 4)
  assert "not improved for 2 evaluations" in stopped["reason"]
  # Rerunning the command does not train on: the run has stopped.
  again = _trainer(model_dir, [0.99], train_steps=20,
                   early_stopping_patience=2)
  assert again.train() == [] and again.eval_results == []
  # With more patience the run goes on from step 8; the count starts at the
  # best checkpoint's step (4), as it would have without the stop.
  more = _trainer(model_dir, [0.8, 0.6, 0.6, 0.6], train_steps=20,
                  early_stopping_patience=3)
  more.train()
  assert [r["step"] for r in more.eval_results] == [10, 12, 14, 16]
  assert more.stopped_early_at == 16


def test_a_best_score_at_its_ceiling_stops_the_run(tmp_path):
  model_dir = str(tmp_path)
  # Without patience the run would go to step 20; the score reaches its
  # bound 1.0 at step 6, and no later checkpoint could beat it.
  trainer = _trainer(model_dir, [0.5, 0.9, 1.0, 1.0, 1.0], train_steps=20,
                     best_metric_ceiling=1.0)
  trainer.train()
  assert [r["step"] for r in trainer.eval_results] == [2, 4, 6]
  assert trainer.stopped_early_at == 6
  record = json.load(open(os.path.join(model_dir, "best", "metrics.json")))
  assert record["step"] == 6
  stopped = json.load(open(os.path.join(model_dir, "early_stopping.json")))
  assert "reached its bound 1" in stopped["reason"]
  # Rerunning does not train on.
  again = _trainer(model_dir, [0.5], train_steps=20, best_metric_ceiling=1.0)
  assert again.train() == [] and again.eval_results == []


def test_early_stopping_without_evaluations_is_not_used(tmp_path):
  trainer = trainer_lib.Trainer(model_dir=str(tmp_path), task=_ScriptedTask([]),
                                train_steps=4, early_stopping_patience=2)
  assert trainer.early_stopping_patience is None
  trainer.train()
  assert trainer.stopped_early_at is None
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-4")


def test_evaluate_reads_one_pass_or_max_batches():
  task = _ScriptedTask([1.0, 2.0])
  model = task.build_model()
  results = evaluation.evaluate(task, model)
  assert results["eval_batches"] == 3 and results["score"] == 1.0
  results = evaluation.evaluate(task, model, max_batches=1)
  assert results["eval_batches"] == 1
  with pytest.raises(ValueError, match="no evaluation batch"):
    evaluation.evaluate(task, model, dataset=task.build_inputs(
        training=False).take(0))
  with pytest.raises(ValueError, match="max_batches .* received 0"):
    evaluation.evaluate(task, model, max_batches=0)


@pytest.mark.large
def test_a_kept_step_function_reads_the_current_weights_and_traces_once():
  task = _ScriptedTask([0.0] * 4)
  model = task.build_model()
  step = evaluation.validation_step_fn(task, model)
  first = evaluation.evaluate(task, model, step_fn=step)
  model.layers[-1].kernel.assign(model.layers[-1].kernel + 1.0)
  kept = evaluation.evaluate(task, model, step_fn=step)
  fresh = evaluation.evaluate(task, model)
  assert kept["mse"] == pytest.approx(fresh["mse"])
  assert kept["mse"] != pytest.approx(first["mse"])
  # Batches of 4, 4 and 4 rows: one trace serves every evaluation.
  assert step.experimental_get_tracing_count() == 1


def test_restore_refuses_another_model(tmp_path):
  task = _ScriptedTask([])
  other = tf_keras.Sequential([tf_keras.Input((3,)), tf_keras.layers.Dense(5)])
  metadata = checkpointing.make_metadata("other", {"student": "c" * 64})
  tf.train.Checkpoint(model=other, metadata=metadata).save(
      str(tmp_path / "ckpt"))
  with pytest.raises(ValueError, match="does not fit the model"):
    evaluation.restore_model(task, task.build_model(), str(tmp_path))


class _DescribedTask(_ScriptedTask):
  """Names its model as an encoder a later stage rebuilds."""

  def encoder_configs(self, model):
    return {"encoder": {"units": int(model.layers[-1].units)}}


def test_encoder_config_is_written_beside_the_run_and_the_best(tmp_path):
  model_dir = str(tmp_path)
  trainer = trainer_lib.Trainer(
      model_dir=model_dir, task=_DescribedTask([0.5, 0.7]), train_steps=4,
      log_every=2, checkpoint_every=2, evaluate_every=2,
      optimization=optimization.optimization_config(
          train_steps=4, learning_rate=0.05, warmup_fraction=0.0))
  trainer.train()
  for directory in (model_dir, os.path.join(model_dir, evaluation.BEST_DIR)):
    assert checkpointing.read_encoder_config(
        checkpointing.resolve_checkpoint(directory), "encoder") == {"units": 1}
