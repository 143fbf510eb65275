"""SNIPS task distillation across vocabularies: a fine-tuned teacher -> student.

The teacher (a `intent_slot` run of the default teacher, 30,522-token
vocabulary) and the student (a stage II or NoKD run, 5K student vocabulary)
segment a query differently, but both see the same query and the same words
(each vocabulary splits a word into its own pieces, and no piece spans two
words). So the losses align on

* the query: the intent logits, KL(teacher || student) at temperature T;
* the word: the slot logits at each word's first piece, each model in its own
  segmentation; KL(teacher || student) per word at temperature T, placed at
  the word's first *student* piece (`scatter_word_targets`);

plus the ordinary hard-label fine-tuning loss (`intent_slot`):

  L = hard_label_weight * (CE_intent + CE_slot)
      + kd_weight * T^2 * (intent_kd_weight * KL_intent
                           + slot_kd_weight * KL_slot)
      + hidden_kd_weight * MSE(W h_student(word), h_teacher(word))

each term a mean over the global batch (queries, or words that have a first
piece in both segmentations). T^2 keeps the gradients of the soft terms
comparable across temperatures (Hinton et al., 2015). KL rather than soft
cross-entropy: same gradients, and 0 for a student equal to its teacher.
The optional last term (off by default) aligns hidden states by word, as
TinyBERT's task-specific intermediate-layer loss aligns them by position: the
student's last hidden state at a word's first piece, through a learnt linear
map W (student width -> teacher width, kept out of the exported model), is
pulled towards the teacher's at its own first piece of that word (mean
squared error per dimension, over words).

The teacher's outputs over the training split are computed once, in inference
mode, and cached with a fingerprint (`teacher_cache`); every epoch looks them
up by example index inside tf.data, so the teacher costs nothing per step.
The transfer set can hold queries without labels (`unlabelled`, e.g. an
app's logs): the teacher labels them like the others, and their gold intent
and tags (`intent_slot_data.UNLABELLED`) carry no loss, so only the two KL
terms (and the hidden-state term) learn from them; the CE terms stay means
over the queries and words that have gold labels.
Evaluation, the best checkpoint and export are those of `intent_slot`: the
student is an ordinary `JointIntentSlotModel` and its checkpoints hold only
it.

Example (gin), see `gin_configs/distillation/distill_snips_small.gin`; the
parameters it shares with fine-tuning are bound by the name the fine-tuning
configs use, `IntentSlotTask`, its own by `DistillIntentSlotTask`:

  Trainer.task = 'distill_intent_slot'
  DistillIntentSlotTask.teacher_run = '/runs/snips_teacher'
  IntentSlotTask.init_checkpoint = '/runs/stage2'
  IntentSlotTask.vocab = '/runs/student_vocab.txt'
"""

import dataclasses
import os
from typing import Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.datasets import slot_values as slot_values_lib
from mixvocab_tf.datasets import unlabelled as unlabelled_lib
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning.intent_slot import augment as intent_slot_augment
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning import batch_padding
from mixvocab_tf.tasks.distillation import finetuned_teacher
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.tasks.distillation import teacher_forward

#: Default cache directory, inside the teacher run's directory.
CACHE_DIR_NAME = "teacher_outputs"


def scatter_word_targets(word_logits, word_valid, word_start_positions,
                         length):
  """Puts per-word teacher logits at each word's first student piece.

  Args:
    word_logits: [B, W, S] the teacher's slot logits per word (W >= the
      words of `word_start_positions` that are used).
    word_valid: [B, W] 1 where the teacher has logits for the word.
    word_start_positions: [B, W'] the student's first piece of each word (-1:
      cut), from `intent_slot_data.intent_slot_featurizer`.
    length: the student's token axis length L.

  Returns:
    (targets [B, L, S] float32, weights [B, L] float32): the teacher logits
    of word w at position word_start_positions[b, w], weight 1 there, zeros
    (weight 0) at every other position.
  """
  word_logits = tf.cast(word_logits, tf.float32)
  words = tf.minimum(tf.shape(word_logits)[1],
                     tf.shape(word_start_positions)[1])
  positions = tf.cast(word_start_positions[:, :words], tf.int32)
  valid = (tf.cast(word_valid[:, :words], tf.float32) > 0) & (positions >= 0)
  where = tf.where(valid)  # [K, 2] (b, w)
  batch = tf.cast(where[:, 0], tf.int32)
  indices = tf.stack([batch, tf.gather_nd(positions, where)], axis=1)
  num_slots = tf.shape(word_logits)[2]
  batch_size = tf.shape(word_logits)[0]
  targets = tf.scatter_nd(indices, tf.gather_nd(word_logits[:, :words], where),
                          tf.stack([batch_size, length, num_slots]))
  weights = tf.scatter_nd(indices, tf.ones_like(batch, tf.float32),
                          tf.stack([batch_size, length]))
  return targets, weights


def distillation_terms(outputs, features, temperature):
  """Summed intent and slot KL terms of this replica, with their counts.

  Returns:
    ((intent_sum, queries), (slot_sum, words)) over this replica's batch.
  """
  intent_kl = losses.kl_divergence(features["teacher_intent_logits"],
                                   outputs["intent_logits"], temperature)
  queries = tf.cast(tf.shape(intent_kl)[0], tf.float32)
  slot_logits = tf.cast(outputs["slot_logits"], tf.float32)
  targets, weights = scatter_word_targets(
      features["teacher_slot_logits"], features["teacher_slot_valid"],
      features["word_start_positions"], tf.shape(slot_logits)[1])
  slot_kl = losses.kl_divergence(targets, slot_logits, temperature)
  slot_kl = tf.where(weights > 0, slot_kl * weights, 0.0)
  return ((tf.reduce_sum(intent_kl), queries),
          (tf.reduce_sum(slot_kl), tf.reduce_sum(weights)))


@base_task.register_task("distill_intent_slot")
class DistillIntentSlotTask(
    finetuned_teacher.FinetunedTeacherMixin, intent_slot_task.IntentSlotTask):
  """SNIPS fine-tuning of a student with a fine-tuned teacher's soft labels.

  Args:
    teacher_run: a `intent_slot` run of the teacher: its model_dir (its
      `best/` checkpoint if it has one, else its latest), `best/`, or a
      checkpoint prefix.
    teacher_base: the pretrained teacher that run fine-tuned ('default': the
      package's default teacher; or a Hugging Face / google-research BERT
      directory): its architecture and vocab.txt.
    teacher_vocab: the teacher's vocabulary (default: teacher_base's).
    temperature: T of both KL terms.
    kd_weight: weight of the distillation terms (times T^2).
    intent_kd_weight, slot_kd_weight: their relative weights.
    hard_label_weight: weight of the ordinary fine-tuning loss.
    hidden_kd_weight: weight of the word-level hidden-state MSE (0: off; the
      cache then holds no hidden states).
    cache_dir: where the teacher's outputs are cached (default:
      `<teacher run>/teacher_outputs`, shared by every student of that
      teacher, vocabulary and data).
    teacher_seq_length: the teacher's tokens per query when computing them.
    teacher_batch_size: queries per teacher batch then.
    precompute_features: featurize the training queries once (they are the
      same every epoch) and look features up by example index in tf.data,
      like the teacher's outputs; the batches are the same as featurizing
      each query every epoch, at less CPU per step.
    augment_copies: slot-substituted copies of each training query added to
      the training (transfer) set (`intent_slot.augment`; 0: none). The teacher
      labels them too; gold tags follow by construction.
    augment_p: probability of replacing each slot span in a copy.
    augment_balance: how many more copies a query of a rare intent gets
      (`intent_slot.augment`'s `balance`; 0: `augment_copies` each).
    slot_values: a directory of lists of slot values, one `<type>.txt` per
      slot type of train, or a Rasa NLU file's lookup tables
      (`datasets.slot_values`), e.g. an app's catalogue
      of artists or cities: the copies draw from them as well as from
      train's values. None: train's values only.
    unlabelled: a file of unlabelled queries (`datasets.unlabelled`: one
      per line, or a CSV / TSV / JSONL text column) added to the transfer
      set after the copies: the teacher labels them, and they carry no
      gold-label loss (`intent_slot_data.UNLABELLED`); their whitespace
      words are the words tagged. Read as it is: the own-data job first
      leaves out the dataset's own queries (`own_data.transfer_texts`).
      None: none.
    **kwargs: the arguments of `IntentSlotTask` (the student's
      init_checkpoint, vocab, seq_length, pad_to_longest, ...).
  """

  def __init__(self,
               teacher_run: Optional[str] = None,
               teacher_base: str = finetune_task.DEFAULT_TEACHER,
               teacher_vocab: Optional[str] = None,
               temperature: float = 1.0,
               kd_weight: float = 1.0,
               intent_kd_weight: float = 1.0,
               slot_kd_weight: float = 1.0,
               hard_label_weight: float = 1.0,
               hidden_kd_weight: float = 0.0,
               cache_dir: Optional[str] = None,
               teacher_seq_length: int = 128,
               teacher_batch_size: int = 128,
               precompute_features: bool = True,
               augment_copies: int = 0,
               augment_p: float = 0.5,
               augment_balance: float = 0.0,
               slot_values: Optional[str] = None,
               unlabelled: Optional[str] = None,
               **kwargs):
    if not teacher_run:
      raise ValueError("DistillIntentSlotTask.teacher_run is required: a "
                       "intent_slot run of the teacher.")
    labels = os.path.join(finetuned_teacher.run_dir(teacher_run),
                          intent_slot_task.LABELS_FILE)
    if kwargs.get("labels_file") is None and tf.io.gfile.exists(labels):
      kwargs["labels_file"] = labels  # The teacher's heads' label ids.
    super().__init__(**kwargs)
    self.init_teacher(
        teacher_run, teacher_base, teacher_vocab, temperature,
        dict(kd=kd_weight, intent_kd=intent_kd_weight,
             slot_kd=slot_kd_weight, hard_label=hard_label_weight,
             hidden_kd=hidden_kd_weight),
        teacher_seq_length, teacher_batch_size)
    self.with_hidden = hidden_kd_weight > 0
    name = CACHE_DIR_NAME + ("_hidden" if self.with_hidden else "")
    if augment_copies:
      name += f"_aug{int(augment_copies)}p{float(augment_p):g}s{self.seed}"
      if augment_balance:
        name += f"b{float(augment_balance):g}"
    self.slot_values = slot_values_lib.read_slot_values(
        slot_values, slot_values_lib.slot_types(
            self.examples("train").tags)) if slot_values else None
    if self.slot_values and augment_copies:
      name += "_values" + slot_values_lib.fingerprint(self.slot_values)
    self.unlabelled = unlabelled_lib.read_unlabelled(unlabelled) if (
        unlabelled) else []
    if self.unlabelled:
      name += unlabelled_lib.cache_suffix(self.unlabelled)
    self.cache_dir = cache_dir or os.path.join(
        finetuned_teacher.run_dir(teacher_run), name)
    self.hidden_projection = None
    self.precompute_features = bool(precompute_features)
    self.augment_copies = int(augment_copies)
    self.augment_p = float(augment_p)
    self.augment_balance = float(augment_balance)
    self._train_examples = None
    self._teacher_outputs = None
    self.cache_build_seconds = None

  # ---------------------------------------------------------------------------
  # The teacher and its cached outputs.

  def build_teacher(self):
    """The fine-tuned teacher `JointIntentSlotModel`, loaded, frozen."""
    return self.load_teacher(models.JointIntentSlotModel(
        self.teacher_encoder(),
        num_intents=self.labels.num_intents, num_slots=self.labels.num_slots,
        name="teacher"))

  def expected_fingerprint(self):
    examples = self.train_examples()
    return teacher_cache.make_fingerprint(
        self.teacher_checkpoint_path(),
        text_lib.load_vocab(self.teacher_vocab_path), self.tokens, examples,
        self.labels, self.teacher_seq_length, self.with_hidden)

  def train_examples(self):
    """Train, plus its augmented copies if `augment_copies`, plus the
    `unlabelled` queries."""
    if self._train_examples is None:
      examples = intent_slot_augment.augment(
          self.examples("train"), self.augment_copies, self.augment_p,
          seed=self.seed, slot_values=self.slot_values,
          balance=self.augment_balance)
      if self.unlabelled:
        words = [text.split() for text in self.unlabelled]
        logging.info("Transfer set: %d queries of train and its copies, "
                     "%d unlabelled queries (soft labels only).",
                     len(examples.words), len(words))
        examples = dataclasses.replace(
            examples, words=examples.words + words,
            tags=examples.tags + [[intent_slot_data.UNLABELLED] * len(w)
                                  for w in words],
            intents=examples.intents + [intent_slot_data.UNLABELLED] *
            len(words), line_numbers=None)
      self._train_examples = examples
    return self._train_examples

  def num_train_examples(self):
    return len(self.train_examples().intents)

  def teacher_outputs(self) -> teacher_cache.TeacherOutputs:
    """The cached teacher outputs over SNIPS train (built on first use)."""
    if self._teacher_outputs is None:
      examples = self.train_examples()

      def build():
        teacher = self.build_teacher()
        return teacher_forward.compute_teacher_outputs(
            teacher, examples, self.labels, self.teacher_vocab_path,
            self.teacher_seq_length, self.teacher_batch_size,
            with_hidden=self.with_hidden)

      self._teacher_outputs, self.cache_build_seconds = (
          teacher_cache.load_or_build(self.cache_dir,
                                      self.expected_fingerprint(), build))
    return self._teacher_outputs

  # ---------------------------------------------------------------------------
  # Inputs and loss.

  def build_inputs(self, input_context=None, training=True):
    if not training:
      return super().build_inputs(input_context, training=False)
    examples = self.train_examples()
    batch_size = self.replica_batch_size(input_context)
    if self.precompute_features:
      return self._precomputed_batches(
          precomputed_features(examples, self.labels, self.tokens,
                               self.seq_length), input_context,
          batch_size).prefetch(tf.data.AUTOTUNE)
    featurize = intent_slot_data.intent_slot_featurizer(self.tokens,
                                                        self.seq_length)
    dataset = self.with_example_index(
        intent_slot_data.make_intent_slot_dataset(examples, self.labels))
    lookup = teacher_cache.lookup_fn(self.teacher_outputs(),
                                     max_words=self.seq_length - 2)

    def featurize_with_teacher(example):
      features = featurize(example)
      features.update(lookup(example["example_index"]))
      features["example_index"] = example["example_index"]
      return features

    # Shuffle words (small); the teacher logits are looked up after the
    # shuffle, so the shuffle buffer (saved in checkpoints) stays small.
    return batch_padding.batch_for_training(
        self.shuffled(dataset, input_context).map(
            featurize_with_teacher, num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True),
        batch_size, self.pad_to_longest,
        self.bucket_boundaries).prefetch(tf.data.AUTOTUNE)

  def _precomputed_batches(self, table, input_context, batch_size):
    """Batches of the featurized transfer set `table` ({key: [N, ...]}).

    The same batches as featurizing each example on the fly, built from
    batches of indices: the indices are shuffled as a whole (the transfer
    set lists the originals first, then each copy, so a partial buffer
    would feed each pass mostly originals, then copies), grouped into
    length buckets, and each batch gathers its rows of the table and of the
    teacher's outputs at once.
    """
    lookup = teacher_cache.batch_lookup_fn(self.teacher_outputs(),
                                           max_words=self.seq_length - 2)
    size = int(table["input_mask"].shape[0])
    indices = self.shuffled(tf.data.Dataset.range(size), input_context,
                            buffer_size=size)
    if self.bucket_boundaries:
      lengths = tf.reduce_sum(tf.cast(table["input_mask"], tf.int32), axis=1)
      batches = batch_padding.bucketed_index_batches(
          indices, lengths, batch_size, self.bucket_boundaries)
    else:
      batches = indices.batch(batch_size, drop_remainder=True)
    trim = self.pad_to_longest or bool(self.bucket_boundaries)

    def gather(index):
      features = {k: tf.gather(v, index) for k, v in table.items()}
      features.update(lookup(index))
      features["example_index"] = index
      return batch_padding.trim_to_longest(features) if trim else features

    return batches.map(gather, num_parallel_calls=tf.data.AUTOTUNE,
                       deterministic=True)

  def build_model(self):
    model = super().build_model()
    if self.with_hidden:
      self.hidden_projection = self.build_kd_projection("kd_hidden_projection")
    return model

  def _forward(self, model, features, training):
    """The model's outputs, plus its sequence output if hidden KD is on."""
    if self.hidden_projection is None:
      return model(features, training=training)
    inputs = {k: features[k] for k in intent_slot_data.MODEL_INPUT_KEYS}
    encoded = model.encoder_network(inputs, training=training)
    pooled = model.intent_dropout(encoded["pooled_output"], training=training)
    sequence = model.slot_dropout(encoded["sequence_output"],
                                  training=training)
    return {"intent_logits": model.intent_classifier(pooled),
            "slot_logits": model.slot_classifier(sequence),
            "sequence_output": encoded["sequence_output"]}

  def compute_loss(self, model, features, training):
    outputs = self._forward(model, features, training)
    hard, metrics = intent_slot_task.joint_intent_slot_loss(outputs, features)
    loss = self.weights["hard_label"] * hard
    if self.weights["kd"] and "teacher_intent_logits" in features:
      (intent_sum, queries), (slot_sum, words) = distillation_terms(
          outputs, features, self.temperature)
      loss += self.weights["kd"] * self.temperature**2 * (
          self.weights["intent_kd"] * losses.mean_term(intent_sum, queries)
          + self.weights["slot_kd"] * losses.mean_term(slot_sum, words))
      metrics["distill/intent_kl"] = base_task.metric(intent_sum, queries)
      metrics["distill/slot_kl"] = base_task.metric(slot_sum, words)
    if self.hidden_projection is not None and (
        "teacher_word_hidden" in features):
      hidden_sum, hidden_words = word_hidden_error(
          self.hidden_projection, outputs["sequence_output"], features)
      loss += self.weights["hidden_kd"] * losses.mean_term(hidden_sum,
                                                           hidden_words)
      metrics["distill/hidden_mse"] = base_task.metric(hidden_sum,
                                                       hidden_words)
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; distilling the fine-tuned teacher "
            f"{self.teacher_run} (vocabulary {self.teacher_vocab_path}), T "
            f"{self.temperature}, weights {self.weights}, cache "
            f"{self.cache_dir}")


def word_hidden_error(projection, sequence_output, features):
  """Summed per-word MSE of projected student vs teacher hidden states.

  Returns:
    (sum over words of the mean squared error over dimensions, words).
  """
  positions = tf.cast(features["word_start_positions"], tf.int32)
  teacher = tf.cast(features["teacher_word_hidden"], tf.float32)
  words = tf.minimum(tf.shape(positions)[1], tf.shape(teacher)[1])
  positions = positions[:, :words]
  valid = (tf.cast(features["teacher_slot_valid"][:, :words], tf.float32)
           * tf.cast(positions >= 0, tf.float32))
  student = tf.gather(tf.cast(sequence_output, tf.float32),
                      tf.maximum(positions, 0), batch_dims=1)
  error = tf.reduce_mean(tf.square(projection(student) - teacher[:, :words]),
                         axis=-1)
  error = tf.where(valid > 0, error * valid, 0.0)
  return tf.reduce_sum(error), tf.reduce_sum(valid)


def precomputed_features(examples, labels, vocab, seq_length):
  """{feature: constant [N, ...]} of every example, in order: the features of
  `intent_slot_featurizer(vocab, seq_length)`, computed a batch at a time."""
  features = intent_slot_data.featurize_examples(
      examples, labels,
      intent_slot_data.intent_slot_batch_featurizer(vocab, seq_length))
  return {k: tf.constant(v) for k, v in features.items()}
