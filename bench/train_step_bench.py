r"""Training-step speed of the trainer against Model Garden, and FLOP/s.

Three numbers in one run (Zhao et al., EACL 2021 sizes; synthetic batches, so
only the step is timed, not the text pipeline):

1. Student step (L6-H96 over the shipped student vocabulary, stage II / NoKD)
   through `mixvocab_tf.core.Trainer`, against the same dimensions as
   `official.nlp.modeling.models.BertPretrainerV2` trained by a plain
   GradientTape loop with the same LAMB. Target: speed ratio >= 1.2.
2. Stage I step (the dual-vocabulary teacher with both MLM heads, default
   teacher dimensions 6 x 384, 30,522 + student vocabulary) through the
   trainer, against a plain teacher MLM step (`BertPretrainerV2`, teacher
   vocabulary only, same loop as in 1). Target: time ratio <= 1.15.
3. Achieved FLOP/s of each (analytic count: 2 x multiply-adds of the matmuls,
   forward x 3 for a training step) against this machine's measured float32
   matmul peak (a 2048 x 2048 matmul).

  python bench/train_step_bench.py              # all three, a few minutes
  python bench/train_step_bench.py --steps=3 --repeats=2 --stage1_batch=8

Measured on an idle 2-core machine (matmul peak 362 GFLOP/s), `--only=student`,
5 processes: speed ratio 1.036 / 1.049 / 1.059 wall, 1.032 / 1.047 / 1.061
CPU (min / median / max; 0.98 before the 16-bit dropout of `core/dropout.py`);
with the loop on `orbit.Controller` (2026-11-26, an idle AMD EPYC 2-core
machine, non-editable install): 1.025 / 1.069 / 1.071 wall, 1.037 / 1.069 /
1.075 CPU,
about 500 ms per step, 24% of the matmul peak. With the attention products as
batched matmuls (`networks/batched_attention.py`; 2026-12-02, an idle Intel
Xeon with AMX, oneDNN on): 1.111x wall and CPU, against 0.983x with the
einsums in the same session. With GELU's closed-form gradient, the attention
dropout's scale after the weighted values and the masked-LM cross-entropy
from one softmax (`core/gelu.py`, `core/cross_entropy.py`; the same kind of
machine, later that day, the two commits alternated): 1.177-1.232x wall,
median 1.196 over 5 processes (CPU 1.186-1.206x), against 1.111-1.121x
before. With the key's and the value's attention gradients computed as
transposed products from 96 tokens on (`networks/batched_attention.py`;
2026-12-03, an idle 2-core AMD EPYC with AVX2 only, oneDNN off, the two
commits alternated, 3 processes each): 1.210 / 1.246 / 1.286x wall (the
trainer 639-705 ms a step), against 1.136 / 1.197 / 1.206x (728-740 ms).
TensorFlow's op profile of the
step: the attention and feed-forward einsums ~50% of the CPU time, dropout
(random draws, masks) ~20%, the trainer's own extras (metrics, gradient norm,
finite checks) under 2%.

Timings interleave the two sides of each comparison and take the median of
`--repeats` windows of `--steps` steps, which keeps other processes on a
shared machine from favouring one side; both wall time and this process's CPU
time are reported, the latter being the steadier one on a busy machine.
"""

import statistics
import tempfile
import time

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf
import tf_keras

from official.modeling.optimization import optimizer_factory
from official.nlp.modeling import models as nlp_models
from official.nlp.modeling import networks as nlp_networks

from mixvocab_tf import assets
from mixvocab_tf import text
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.core import flops as flops_lib
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib

FLAGS = flags.FLAGS
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_integer("max_predictions", 20, "Masked tokens per sequence.")
flags.DEFINE_integer("student_batch", 64, "Batch of the student comparison.")
flags.DEFINE_integer("stage1_batch", 32, "Batch of the stage I comparison.")
flags.DEFINE_integer("steps", 5, "Steps per timed window.")
flags.DEFINE_integer("repeats", 3, "Timed windows per side.")
flags.DEFINE_enum("only", "all", ["all", "student", "stage1", "peak"],
                  "Run one part only.")


def _optimization(steps=1000):
  return optimization.optimization_config(train_steps=steps)


def _synthetic_batch(batch, seq_length, predictions, teacher_vocab,
                     student_vocab, vocab_tag=None, seed=0):
  """A fixed masked-LM batch of one vocabulary (tag 0 or 1) or mixed (None)."""
  rng = np.random.RandomState(seed)
  if vocab_tag is None:  # Half the tokens from each vocabulary.
    vocab_ids = (rng.rand(batch, seq_length) < 0.5).astype(np.int32)
  else:
    vocab_ids = np.full((batch, seq_length), vocab_tag, np.int32)
  sizes = np.where(vocab_ids == 1, student_vocab, teacher_vocab)
  word_ids = (rng.rand(batch, seq_length) * sizes).astype(np.int32)
  positions = np.sort(np.stack([rng.choice(seq_length, predictions,
                                           replace=False)
                                for _ in range(batch)]), axis=1)
  masked_vocab = np.take_along_axis(vocab_ids, positions, axis=1)
  masked_sizes = np.where(masked_vocab == 1, student_vocab, teacher_vocab)
  return {
      "input_word_ids": word_ids,
      "input_mask": np.ones((batch, seq_length), np.int32),
      "input_type_ids": np.zeros((batch, seq_length), np.int32),
      "input_vocab_ids": vocab_ids,
      "masked_lm_positions": positions.astype(np.int32),
      "masked_lm_ids": (rng.rand(batch, predictions) *
                        masked_sizes).astype(np.int32),
      "masked_lm_vocab_ids": masked_vocab.astype(np.int32),
      "masked_lm_weights": np.ones((batch, predictions), np.float32),
  }


def _repeat(batch):
  return tf.data.Dataset.from_tensors(
      {k: tf.constant(v) for k, v in batch.items()}).repeat()


class _SyntheticNoKD(nokd.NoKDTask):
  """The NoKD student on one repeated synthetic batch."""

  def __init__(self, batch, **kwargs):
    super().__init__(**kwargs)
    self.batch = batch

  def build_inputs(self, input_context=None, training=True):
    return _repeat(self.batch)


class _SyntheticStage1(stage1.Stage1Task):
  """Stage I on one repeated synthetic mixed batch."""

  def __init__(self, batch, **kwargs):
    super().__init__(**kwargs)
    self.batch = batch

  def build_inputs(self, input_context=None, training=True):
    return _repeat(self.batch)


def _trainer_loop(task):
  """The trainer's compiled loop for `task`: a function of a step count."""
  trainer = trainer_lib.Trainer(model_dir=tempfile.mkdtemp(), task=task,
                                train_steps=1000,
                                optimization=_optimization())
  trainer.build()

  def run(steps):
    # orbit's StandardTrainer.train, as the Controller calls it; its
    # train_loop_end reads the loop's outputs, which waits for the steps.
    trainer.task_trainer.train(tf.constant(steps, tf.int32))

  return run, trainer.model


def _baseline_loop(encoder_config, batch):
  """A plain Model Garden step: BertPretrainerV2, GradientTape, LAMB."""
  encoder = nlp_networks.BertEncoderV2(**encoder_config)
  model = nlp_models.BertPretrainerV2(
      encoder, mlm_activation=tf_keras.activations.get("gelu"))
  # The same LAMB and schedule; the baseline clips as Model Garden does,
  # inside the optimizer (global_clipnorm of the config).
  factory = optimizer_factory.OptimizerFactory(_optimization())
  optimizer = factory.build_optimizer(factory.build_learning_rate())
  iterator = iter(_repeat(batch))

  @tf.function
  def loop(steps):
    loss = tf.constant(0.0)
    for _ in tf.range(steps):
      features = next(iterator)
      with tf.GradientTape() as tape:
        logits = model(features, training=True)["mlm_logits"]
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=features["masked_lm_ids"], logits=logits)
        weights = features["masked_lm_weights"]
        loss = tf.reduce_sum(losses * weights) / tf.reduce_sum(weights)
      grads = tape.gradient(loss, model.trainable_variables)
      pairs = [(g, v) for g, v in zip(grads, model.trainable_variables)
               if g is not None]
      optimizer.apply_gradients(pairs)
    return loss

  def run(steps):
    float(loop(tf.constant(steps)))

  return run, model


def _time_pair(first, second, steps, repeats):
  """Median (wall, CPU) seconds per step of two step functions, interleaved.

  CPU time is this process's (all threads): on a machine shared with other
  jobs it is the steadier measure of the work a step does; wall time is what
  a quiet machine would show.
  """
  first(1)  # Traces and warms up.
  second(1)
  times = {0: ([], []), 1: ([], [])}
  for _ in range(repeats):
    for side, run in enumerate((first, second)):
      wall, cpu = time.perf_counter(), time.process_time()
      run(steps)
      times[side][0].append((time.perf_counter() - wall) / steps)
      times[side][1].append((time.process_time() - cpu) / steps)
  return [tuple(statistics.median(t) for t in times[side]) for side in (0, 1)]


def _matmul_peak(n=2048, repeats=5):
  a = tf.random.normal([n, n])
  b = tf.random.normal([n, n])

  @tf.function
  def product():
    return tf.reduce_sum(tf.matmul(a, b))

  float(product())
  best = min(_timed(product) for _ in range(repeats))
  return 2 * n ** 3 / best


def _timed(fn):
  start = time.perf_counter()
  float(fn())
  return time.perf_counter() - start


def _student_comparison(peak):
  student_vocab = len(text.load_vocab(assets.default_student_vocab()))
  batch = _synthetic_batch(FLAGS.student_batch, FLAGS.seq_length,
                           FLAGS.max_predictions, student_vocab, student_vocab,
                           vocab_tag=1)
  task = _SyntheticNoKD(
      batch, student=student_spec.StudentSpec(preset="L6-H96"),
      inputs=mlm_inputs.MlmInputs(global_batch_size=FLAGS.student_batch,
                                  seq_length=FLAGS.seq_length,
                                  max_predictions=FLAGS.max_predictions))
  ours, model = _trainer_loop(task)
  config = dict(task.encoder_config, vocab_size=student_vocab)
  baseline, _ = _baseline_loop(config, batch)
  (ours_time, ours_cpu), (baseline_time, baseline_cpu) = _time_pair(
      ours, baseline, FLAGS.steps, FLAGS.repeats)
  flops = flops_lib.bert_train_flops(6, 96, 384, FLAGS.seq_length,
                                     FLAGS.student_batch,
                                     FLAGS.max_predictions,
                                     [(96, student_vocab)])
  print(f"\n[1] Student L6-H96 ({model.count_params():,} parameters), batch "
        f"{FLAGS.student_batch} x {FLAGS.seq_length}:")
  print(f"    trainer          {1 / ours_time:7.3f} steps/s "
        f"({ours_time * 1000:.0f} ms/step wall, {ours_cpu * 1000:.0f} ms CPU)")
  print(f"    BertPretrainerV2 {1 / baseline_time:7.3f} steps/s "
        f"({baseline_time * 1000:.0f} ms/step wall, "
        f"{baseline_cpu * 1000:.0f} ms CPU)")
  print(f"    speed ratio trainer / BertPretrainerV2 = "
        f"{baseline_time / ours_time:.3f} wall, "
        f"{baseline_cpu / ours_cpu:.3f} CPU  (target >= 1.2)")
  print(f"    {flops / 1e9:.1f} GFLOP/step: {flops / ours_time / 1e9:.1f} "
        f"GFLOP/s = {flops / ours_time / peak:.1%} of the matmul peak")


def _stage1_comparison(peak):
  teacher_vocab = len(text.load_vocab(assets.default_teacher_vocab()))
  student_vocab = len(text.load_vocab(assets.default_student_vocab()))
  width = 96
  mixed = _synthetic_batch(FLAGS.stage1_batch, FLAGS.seq_length,
                           FLAGS.max_predictions, teacher_vocab,
                           student_vocab)
  plain = _synthetic_batch(FLAGS.stage1_batch, FLAGS.seq_length,
                           FLAGS.max_predictions, teacher_vocab,
                           student_vocab, vocab_tag=0)
  task = _SyntheticStage1(
      mixed, student_embedding_width=width,
      inputs=mlm_inputs.MlmInputs(global_batch_size=FLAGS.stage1_batch,
                                  seq_length=FLAGS.seq_length,
                                  max_predictions=FLAGS.max_predictions))
  ours, model = _trainer_loop(task)
  config, _ = stage1.teacher_encoder_config(assets.default_teacher_dir())
  baseline, _ = _baseline_loop(config, plain)
  (ours_time, ours_cpu), (baseline_time, baseline_cpu) = _time_pair(
      ours, baseline, FLAGS.steps, FLAGS.repeats)
  hidden, inner = config["hidden_size"], config["inner_dim"]
  flops = flops_lib.bert_train_flops(
      config["num_layers"], hidden, inner, FLAGS.seq_length,
      FLAGS.stage1_batch, FLAGS.max_predictions,
      [(hidden, teacher_vocab), (width, student_vocab)],
      extra_token_macs=width * hidden)  # Up-projection of student tokens.
  print(f"\n[2] Stage I teacher {config['num_layers']} x {hidden} "
        f"({model.count_params():,} parameters), batch {FLAGS.stage1_batch} x "
        f"{FLAGS.seq_length}:")
  print(f"    stage I (trainer)      {ours_time * 1000:7.0f} ms/step wall, "
        f"{ours_cpu * 1000:7.0f} ms CPU")
  print(f"    plain teacher MLM step {baseline_time * 1000:7.0f} ms/step wall, "
        f"{baseline_cpu * 1000:7.0f} ms CPU")
  print(f"    time ratio stage I / plain = {ours_time / baseline_time:.3f} "
        f"wall, {ours_cpu / baseline_cpu:.3f} CPU  (target <= 1.15)")
  print(f"    {flops / 1e9:.1f} GFLOP/step: {flops / ours_time / 1e9:.1f} "
        f"GFLOP/s = {flops / ours_time / peak:.1%} of the matmul peak")


def main(argv):
  del argv
  tf_keras.utils.set_random_seed(0)
  peak = _matmul_peak()
  print(f"float32 matmul peak (2048 x 2048, TF): {peak / 1e9:.1f} GFLOP/s "
        f"on {len(tf.config.list_physical_devices('CPU'))} CPU device(s)")
  if FLAGS.only in ("all", "student"):
    _student_comparison(peak)
  if FLAGS.only in ("all", "stage1"):
    _stage1_comparison(peak)


if __name__ == "__main__":
  app.run(main)
