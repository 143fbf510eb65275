"""The stage I teacher: dual-vocabulary encoder with one MLM head per vocabulary.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3, stage I: the teacher is trained with masked-LM on
mixed-vocabulary input, and a masked token is predicted over the vocabulary that
segmented it, with a separate softmax per vocabulary. This model computes both
heads' logits at every masked position; the task picks one per position with
`masked_lm_vocab_ids`.

Heads (both `official.nlp.modeling.layers.MaskedLM`, evaluated only at
`masked_lm_positions`):
* teacher vocabulary: transform d_t -> d_t, LayerNorm, output tied to the teacher
  table [V_t, d_t] (exactly BERT's head, so it loads from checkpoints);
* student vocabulary: transform d_t -> d_s, LayerNorm over d_s, output tied to
  the student table [V_s, d_s]. The transform is the down-projection the shapes
  require; tying keeps the student table the only student-vocabulary word
  representation, which is what stage II inherits.
"""

import tf_keras

from mixvocab_tf.models import mlm_pretrainer


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class DualVocabPretrainer(mlm_pretrainer.MLMPretrainer):
  """A `DualVocabBertEncoder` with a teacher-vocab and a student-vocab MLM head.

  Example:
  ```python
  teacher = DualVocabPretrainer(DualVocabBertEncoder(...))
  outputs = teacher(features)  # input_word_ids, input_mask, input_type_ids,
                               # input_vocab_ids, masked_lm_positions
  outputs["teacher_mlm_logits"]  # [B, P, V_t]
  outputs["student_mlm_logits"]  # [B, P, V_s]
  ```

  Args:
    encoder_network: A `DualVocabBertEncoder`.
    mlm_activation: Activation of both heads' transforms; None uses the
      encoder's `inner_activation`, as BERT does.
    mlm_initializer: Initializer of the heads' transforms.
    **kwargs: Keyword arguments of `tf_keras.Model` (e.g. `name`).

  Call arguments:
    inputs: A dict of int features [B, L] (`input_word_ids`, `input_mask`,
      `input_type_ids`, `input_vocab_ids`) and optionally `masked_lm_positions`
      [B, P].
    training: Whether dropout is on.

  Returns:
    The encoder's output dict plus, when `masked_lm_positions` is given,
    `teacher_mlm_logits` [B, P, V_t] and `student_mlm_logits` [B, P, V_s].
  """

  def __init__(self, encoder_network, mlm_activation=None,
               mlm_initializer=None, name="dual_vocab_pretrainer", **kwargs):
    super().__init__(encoder_network, mlm_activation=mlm_activation,
                     mlm_initializer=mlm_initializer, name=name, **kwargs)

  def _check_encoder(self, encoder_network):
    if not hasattr(encoder_network, "get_student_embedding_table"):
      raise ValueError("DualVocabPretrainer needs a DualVocabBertEncoder; "
                       f"received a {type(encoder_network).__name__}.")

  def _create_heads(self):
    self.masked_lm = self._make_head(
        self.encoder_network.get_embedding_table(), "cls/predictions")
    self.student_masked_lm = self._make_head(
        self.encoder_network.get_student_embedding_table(),
        "cls/student_predictions")

  def _heads(self):
    return [("teacher_mlm_logits", "masked_lm", self.masked_lm),
            ("student_mlm_logits", "student_masked_lm", self.student_masked_lm)]
