"""Keras models of mixed-vocabulary distillation (Zhao et al., EACL 2021).

Encoders with masked-LM heads (the stage I teacher with one head per vocabulary,
Section 3; the student and the plain teacher with one head), the teacher
checkpoint loaders, and the shared-projection loss of the "dual training" version.
"""

from mixvocab_tf.models.dual_vocab_pretrainer import DualVocabPretrainer
from mixvocab_tf.models.mlm_pretrainer import MLMPretrainer
