"""GLUE task distillation across vocabularies: a fine-tuned teacher -> student.

The sentence-level counterpart of `distill_intent_slot` (issue 16, item 5): the
teacher is a `text_classification` run of the default teacher (its own
30,522-token vocabulary) on SST-2 or MRPC, the student a stage II or NoKD
run (or a fresh student) with the ~5K student vocabulary. The two segment a
sentence differently, but both classify the same sentence (pair), so the
soft targets align on the class logits:

  L = hard_label_weight * CE(labels, student)
      + kd_weight * T^2 * KL(softmax(teacher / T) || softmax(student / T))
      + pooled_kd_weight * MSE(W p_student, p_teacher)

each term a mean over the global batch (CE over the examples with a gold
label weight, see augmentation below). The optional last term (off by
default) aligns what each classifier reads, the one representation both
models compute for the same sentence whatever their segmentations: the
student's pooled output p_student (student width), through a learnt linear
map W kept out of the exported model, is pulled towards the teacher's
(mean squared error per dimension), as TinyBERT's intermediate-layer loss
aligns hidden states, and as `distill_intent_slot` aligns them by word. T^2 keeps
the soft term's gradients comparable across temperatures (Hinton et al., 2015); KL rather than soft
cross-entropy: the same gradients, and 0 for a student equal to its teacher.

The teacher's logits over the training split are computed once, in inference
mode (`teacher_forward.compute_teacher_logits`), and cached with a
fingerprint of the teacher checkpoint, both vocabularies and the data
(`teacher_cache.SentenceTeacherOutputs`, in
`<teacher run>/teacher_outputs...`); each epoch looks them up by example
index inside tf.data, so a distillation step costs a fine-tuning step.

Optionally the transfer set adds edited copies of each training example
(`text_classification.augment`: TinyBERT-style word substitution, by random training words
or by the teacher's embedding neighbours, deletion, and swapped pairs); the
teacher labels them (cached too), and their gold labels get
weight `augment_label_weight` (default 0: the soft label is their target).

Evaluation, the best checkpoint and export are those of `text_classification`: the
student is an ordinary `SentenceClassifier` and its checkpoints hold only it.

A user's text classification dataset works as in `text_classification`
(the dataset 'files', `datasets.user_dataset`): the teacher is a
`text_classification` run on that dataset, the transfer set starts from its train
split (`TextClassificationTask.train_split_lists`), and the cache fingerprint names
it `user:<absolute directory>` beside the data itself.

Example (gin), see `gin_configs/distillation/distill_glue_small.gin`:

  Trainer.task = 'distill_text_classification'
  DistillTextClassificationTask.teacher_run = '/runs/sst2_teacher'
  TextClassificationTask.init_checkpoint = '/runs/stage2'
  TextClassificationTask.vocab = '/runs/student_vocab.txt'
"""

import hashlib
import os
from typing import Optional

from absl import logging
import numpy as np
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.core import gin_utils
from mixvocab_tf.datasets import unlabelled as unlabelled_lib
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import finetuned_teacher
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.tasks.distillation import teacher_forward
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning.text_classification import augment as text_classification_augment
from mixvocab_tf.text import pretraining_input

#: Default cache directory, inside the teacher run's directory.
CACHE_DIR_NAME = "teacher_outputs"


def glue_data_fingerprint(dataset_name, sentences_a, sentences_b, labels):
  """sha256 of a task's examples (sentences and labels, in order).

  `dataset_name` names the data: a GLUE task, or `user:<directory>` for a
  user's dataset (`TextClassificationTask.dataset_name`).
  """
  digest = hashlib.sha256(f"{dataset_name}\n".encode("utf-8"))
  for a, b, label in zip(sentences_a, sentences_b, labels):
    digest.update(f"{a}\t{b}\t{int(label)}\n".encode("utf-8"))
  return digest.hexdigest()


def distillation_term(logits, teacher_logits, temperature):
  """(summed KL(teacher_T || student_T), examples) of this replica's batch."""
  kl = losses.kl_divergence(teacher_logits, logits, temperature)
  return tf.reduce_sum(kl), tf.cast(tf.shape(kl)[0], tf.float32)


def pooled_error(projection, pooled, teacher_pooled):
  """(summed per-example MSE of W pooled vs the teacher's, examples)."""
  error = tf.reduce_mean(tf.square(
      projection(tf.cast(pooled, tf.float32))
      - tf.cast(teacher_pooled, tf.float32)), axis=-1)
  return tf.reduce_sum(error), tf.cast(tf.shape(error)[0], tf.float32)


@base_task.register_task("distill_text_classification")
class DistillTextClassificationTask(
    finetuned_teacher.FinetunedTeacherMixin, text_classification_task.TextClassificationTask):
  """GLUE fine-tuning of a student with a fine-tuned teacher's soft labels.

  Args:
    teacher_run: a `text_classification` run of the teacher on the same GLUE task
      (or the same user's dataset):
      its model_dir (its `best/` checkpoint if it has one, else its latest),
      `best/`, or a checkpoint prefix.
    teacher_base: the pretrained teacher that run fine-tuned ('default': the
      package's default teacher; or a Hugging Face / google-research BERT
      directory): its architecture and vocab.txt.
    teacher_vocab: the teacher's vocabulary (default: teacher_base's).
    teacher_pooling: what the teacher's classifier reads ('cls' or 'mean',
      `SentenceClassifier.pooling`); None: what the teacher run was trained
      with (its operative_config.gin), 'cls' if it does not say.
    temperature: T of the KL term.
    kd_weight: weight of the distillation term (times T^2).
    hard_label_weight: weight of the ordinary cross-entropy.
    pooled_kd_weight: weight of the pooled-output MSE (0: off; the cache
      then holds no pooled outputs).
    cache_dir: where the teacher's logits are cached (default:
      `<teacher run>/teacher_outputs[_aug...]`).
    teacher_seq_length: the teacher's tokens per example when computing them.
    teacher_batch_size: examples per teacher batch then.
    augment_copies: edited copies of each training example added to the
      transfer set (`text_classification.augment`; 0: none), labelled by the teacher.
    augment_p: probability that a word of a copy is replaced.
    augment_p_delete: probability that a word of a copy is dropped.
    augment_swap_pairs: swap the sentences of each copy of a pair.
    augment_label_weight: weight of a copy's gold label in the hard-label
      loss (0: soft labels only, as TinyBERT).
    augment_neighbours: replace words by one of their this many nearest
      whole-word tokens in the fine-tuned teacher's input embeddings
      (`text_classification_augment.embedding_neighbours`); 0: by random training words.
    augment_min_words: copy only the examples of at least this many words.
    transfer_text: plain-text files (a comma-separated list or glob) whose
      sentences join the transfer set with the teacher's soft labels only
      (`text_classification_augment.text_sentences`); single-sentence tasks only.
    transfer_sentences: how many of their sentences, at most.
    unlabelled: a file of unlabelled texts of the task (`datasets.unlabelled`:
      one per line, or a CSV / TSV / JSONL file's column of the dataset's
      `text_column`, e.g. an app's logs),
      each kept whole, joining the transfer set with the teacher's soft
      labels only; single-text tasks only. Read as it is: the own-data job
      first leaves out the dataset's own texts (`own_data.transfer_texts`).
      None: none.
    **kwargs: the arguments of `TextClassificationTask` (the dataset, the
      student's init_checkpoint, vocab, seq_length, pad_to_longest, ...).
  """

  def __init__(self,
               teacher_run: Optional[str] = None,
               teacher_base: str = finetune_task.DEFAULT_TEACHER,
               teacher_vocab: Optional[str] = None,
               teacher_pooling: Optional[str] = None,
               temperature: float = 1.0,
               kd_weight: float = 1.0,
               hard_label_weight: float = 1.0,
               pooled_kd_weight: float = 0.0,
               cache_dir: Optional[str] = None,
               teacher_seq_length: int = 128,
               teacher_batch_size: int = 128,
               augment_copies: int = 0,
               augment_p: float = 0.1,
               augment_p_delete: float = 0.1,
               augment_swap_pairs: bool = False,
               augment_label_weight: float = 0.0,
               augment_neighbours: int = 0,
               augment_min_words: int = 0,
               transfer_text: Optional[str] = None,
               transfer_sentences: int = 100000,
               unlabelled: Optional[str] = None,
               **kwargs):
    if not teacher_run:
      raise ValueError("DistillTextClassificationTask.teacher_run is required: a "
                       "text_classification run of the teacher on the same task.")
    super().__init__(**kwargs)
    if teacher_pooling is None:
      teacher_pooling = gin_utils.run_binding(
          finetuned_teacher.run_dir(teacher_run),
          "TextClassificationTask.pooling") or "cls"
    if teacher_pooling not in models.sentence_classifier.POOLINGS:
      raise ValueError(
          f"teacher_pooling must be one of "
          f"{models.sentence_classifier.POOLINGS}; received {teacher_pooling!r}.")
    self.teacher_pooling = teacher_pooling
    self.init_teacher(
        teacher_run, teacher_base, teacher_vocab, temperature,
        dict(kd=kd_weight, hard_label=hard_label_weight,
             augment_label=augment_label_weight, pooled_kd=pooled_kd_weight),
        teacher_seq_length, teacher_batch_size)
    self.augment = dict(copies=int(augment_copies), p=float(augment_p),
                        p_delete=float(augment_p_delete),
                        swap_pairs=bool(augment_swap_pairs),
                        min_words=int(augment_min_words))
    if augment_neighbours < 0:
      raise ValueError("augment_neighbours must be >= 0; received "
                       f"{augment_neighbours}.")
    self.augment_neighbours = int(augment_neighbours)
    self.transfer_files = (pretraining_input.expand_files(transfer_text)
                           if transfer_text else [])
    # A CSV / TSV / JSONL file's text is in the user's dataset's column.
    column = getattr(self.dataset, "columns", {}).get("text_column", "text")
    self.unlabelled = unlabelled_lib.read_unlabelled(unlabelled, column) if (
        unlabelled) else []
    # A user's dataset says whether it holds pairs once it is read
    # (`train_examples`); GLUE says so now.
    if (self.transfer_files or self.unlabelled) and self.dataset.glue_task:
      self._check_transfer_text()
    if (self.transfer_files or self.unlabelled) and augment_label_weight:
      raise ValueError(
          "DistillTextClassificationTask.transfer_text and unlabelled texts "
          "have no gold label, so augment_label_weight must be 0; received "
          f"{augment_label_weight!r}.")
    if int(transfer_sentences) <= 0:
      raise ValueError("transfer_sentences must be positive; received "
                       f"{transfer_sentences!r}.")
    self.transfer_sentences = int(transfer_sentences)
    if pooled_kd_weight < 0:
      raise ValueError("pooled_kd_weight must be >= 0; received "
                       f"{pooled_kd_weight!r}.")
    self.with_pooled = pooled_kd_weight > 0
    self.pooled_projection = None
    name = CACHE_DIR_NAME + ("_pooled" if self.with_pooled else "")
    if augment_copies:
      name += (f"_aug{int(augment_copies)}p{float(augment_p):g}"
               f"d{float(augment_p_delete):g}"
               f"{'swap' if augment_swap_pairs else ''}"
               f"{f'nb{self.augment_neighbours}' if augment_neighbours else ''}"
               f"{f'w{int(augment_min_words)}' if augment_min_words else ''}"
               f"s{self.seed}")
    if self.transfer_files:
      # The fingerprint checks the sentences themselves; the name only
      # keeps caches of different text apart.
      name += f"_text{self.transfer_sentences}s{self.seed}_" + hashlib.sha256(
          "\n".join(self.transfer_files).encode()).hexdigest()[:8]
    if self.unlabelled:
      name += unlabelled_lib.cache_suffix(self.unlabelled)
    self.cache_dir = cache_dir or os.path.join(
        finetuned_teacher.run_dir(teacher_run), name)
    self._train_examples = None
    self._teacher_outputs = None
    self.cache_build_seconds = None

  def _check_transfer_text(self):
    if self.is_pair:
      raise ValueError(
          "DistillTextClassificationTask.transfer_text and unlabelled add "
          f"single texts; the {self.dataset_name} task reads sentence pairs.")

  # ---------------------------------------------------------------------------
  # The teacher and its cached outputs.

  def build_teacher(self):
    """The fine-tuned teacher `SentenceClassifier`, loaded, frozen."""
    return self.load_teacher(models.SentenceClassifier(
        self.teacher_encoder(), num_classes=len(self.label_names),
        pooling=self.teacher_pooling, name="teacher"))

  def train_examples(self):
    """(sentences_a, sentences_b, labels, is_original) of the transfer set."""
    if self._train_examples is None:
      if self.transfer_files or self.unlabelled:
        self._check_transfer_text()
      a, b, labels = self.train_split_lists()
      neighbours = None
      if self.augment["copies"] and self.augment_neighbours:
        table = self.build_teacher().encoder_network.get_embedding_table()
        neighbours = text_classification_augment.embedding_neighbours(
            table.numpy(), text_lib.load_vocab(self.teacher_vocab_path),
            {w.lower() for s in a + b for w in s.split()},
            self.augment_neighbours)
      a, b, labels, is_original = text_classification_augment.augment(
          a, b, labels, seed=self.seed, neighbours=neighbours, **self.augment)
      if self.transfer_files:
        text = text_classification_augment.text_sentences(
            self.transfer_files, self.transfer_sentences, seed=self.seed)
        logging.info("Transfer set: %d sentences from %s, soft labels only.",
                     len(text), self.transfer_files)
        # Label 0 is a placeholder: their gold-label weight is
        # augment_label_weight's, and without a label it must be 0.
        a, b = a + text, b + [""] * len(text)
        labels = labels + [0] * len(text)
        is_original = is_original + [False] * len(text)
      if self.unlabelled:
        logging.info("Transfer set: %d unlabelled texts, soft labels only.",
                     len(self.unlabelled))
        # Label 0 is a placeholder, as for the sentences above.
        a, b = a + self.unlabelled, b + [""] * len(self.unlabelled)
        labels = labels + [0] * len(self.unlabelled)
        is_original = is_original + [False] * len(self.unlabelled)
      self._train_examples = (a, b, labels, is_original)
    return self._train_examples

  def num_train_examples(self):
    return len(self.train_examples()[2])

  def expected_fingerprint(self):
    a, b, labels, _ = self.train_examples()
    fingerprint = teacher_cache.base_fingerprint(
        self.teacher_checkpoint_path(),
        text_lib.load_vocab(self.teacher_vocab_path), self.tokens,
        glue_data_fingerprint(self.dataset_name, a, b, labels), len(labels),
        self.teacher_seq_length)
    if self.with_pooled:
      fingerprint["outputs"] = "logits+pooled"
    return fingerprint

  def teacher_outputs(self) -> teacher_cache.SentenceTeacherOutputs:
    """The cached teacher logits over the transfer set (built on first use)."""
    if self._teacher_outputs is None:
      a, b, _, _ = self.train_examples()

      def build():
        outputs = teacher_forward.compute_teacher_logits(
            self.build_teacher(), a, b, self.is_pair,
            self.teacher_vocab_path, self.teacher_seq_length,
            self.teacher_batch_size, with_pooled=self.with_pooled)
        if self.with_pooled:
          return teacher_cache.SentenceTeacherOutputs(outputs[0],
                                                      pooled=outputs[1])
        return teacher_cache.SentenceTeacherOutputs(outputs)

      self._teacher_outputs, self.cache_build_seconds = (
          teacher_cache.load_or_build(
              self.cache_dir, self.expected_fingerprint(), build,
              outputs_class=teacher_cache.SentenceTeacherOutputs))
    return self._teacher_outputs

  # ---------------------------------------------------------------------------
  # The model, and the pooled-output projection beside it.

  def build_model(self):
    model = super().build_model()
    if self.with_pooled:
      self.pooled_projection = self.build_kd_projection("kd_pooled_projection")
    return model

  # ---------------------------------------------------------------------------
  # Inputs and loss.

  def build_inputs(self, input_context=None, training=True):
    if not training:
      return super().build_inputs(input_context, training=False)
    a, b, labels, is_original = self.train_examples()
    outputs = self.teacher_outputs()
    logits = tf.constant(outputs.logits)
    # A cache without pooled outputs has another fingerprint ("outputs"),
    # so `teacher_outputs` has refused it already.
    pooled = tf.constant(outputs.pooled) if self.with_pooled else None
    label_weights = tf.constant(np.where(
        is_original, 1.0, self.weights["augment_label"]).astype(np.float32))
    sentences_a = tf.constant(a, tf.string)
    sentences_b = tf.constant(b, tf.string)
    label_ids = tf.constant(np.asarray(labels, np.int32))

    def example(index):
      return {"sentence_a": tf.gather(sentences_a, index),
              "sentence_b": tf.gather(sentences_b, index),
              "label": tf.gather(label_ids, index), "example_index": index}

    def with_teacher(features):
      index = features["example_index"]
      features = dict(features, teacher_logits=tf.gather(logits, index),
                      label_weight=tf.gather(label_weights, index))
      if pooled is not None:
        features["teacher_pooled"] = tf.gather(pooled, index)
      return features

    # The transfer set lists the originals first, then copy 1 of each, ...,
    # then any transfer text, so it is shuffled as a whole: a partial buffer
    # would feed each pass its originals, then its copies, then the text.
    # Only indices are shuffled (the buffer is saved in checkpoints); the
    # sentences and the teacher outputs are looked up after the shuffle.
    indices = tf.data.Dataset.range(len(labels))
    return self.training_batches(
        indices, input_context, buffer_size=len(labels), lookup=example).map(
            with_teacher, num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True).prefetch(tf.data.AUTOTUNE)

  def compute_loss(self, model, features, training):
    outputs = model(features, training=training)
    logits = tf.cast(outputs["logits"], tf.float32)
    labels = tf.cast(features["label"], tf.int32)
    count = tf.cast(tf.shape(labels)[0], tf.float32)
    weights = features.get("label_weight", tf.ones_like(logits[:, 0]))
    # A label train lacks (-1: only in a user's validation or test split)
    # has no cross-entropy.
    weights = weights * tf.cast(labels >= 0, weights.dtype)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.maximum(labels, 0), logits=logits)
    ce_sum = tf.reduce_sum(cross_entropy * weights)
    labelled = tf.reduce_sum(weights)
    correct = tf.reduce_sum(weights * tf.cast(tf.equal(
        tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32))
    loss = self.weights["hard_label"] * tf.math.divide_no_nan(
        ce_sum, base_task.global_sum(labelled))
    metrics = {"classifier/loss": base_task.metric(ce_sum, labelled),
               "classifier/accuracy": base_task.metric(correct, labelled)}
    if self.weights["kd"] and "teacher_logits" in features:
      kl_sum, examples = distillation_term(logits, features["teacher_logits"],
                                           self.temperature)
      loss += self.weights["kd"] * self.temperature**2 * tf.math.divide_no_nan(
          kl_sum, base_task.global_sum(count))
      metrics["distill/kl"] = base_task.metric(kl_sum, examples)
    if self.pooled_projection is not None and "teacher_pooled" in features:
      pooled_sum, examples = pooled_error(
          self.pooled_projection, outputs["pooled_output"],
          features["teacher_pooled"])
      loss += self.weights["pooled_kd"] * losses.mean_term(pooled_sum,
                                                           examples)
      metrics["distill/pooled_mse"] = base_task.metric(pooled_sum, examples)
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; distilling the fine-tuned teacher "
            f"{self.teacher_run} (vocabulary {self.teacher_vocab_path}), T "
            f"{self.temperature}, weights {self.weights}, augmentation "
            f"{self.augment}, transfer text {self.transfer_files or None}, "
            f"cache {self.cache_dir}")
