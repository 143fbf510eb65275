"""Encoder networks of mixed-vocabulary distillation (Zhao et al., EACL 2021).

`DualVocabBertEncoder` is the stage I teacher over the teacher and student
vocabularies (Section 3); `PlainBertEncoder` is the single-vocabulary BERT used for
students (presets in `student_encoder`, Section 4) and for the plain teacher.
"""

from mixvocab_tf.networks.dual_vocab_bert_encoder import DualVocabBertEncoder
from mixvocab_tf.networks.plain_bert_encoder import PlainBertEncoder
from mixvocab_tf.networks.student_encoder import build_student_encoder
from mixvocab_tf.networks.student_encoder import PAPER_PARAMETER_COUNTS
from mixvocab_tf.networks.student_encoder import PAPER_STUDENT_VOCAB_SIZE
from mixvocab_tf.networks.student_encoder import STUDENT_PRESETS
from mixvocab_tf.networks.student_encoder import student_encoder_config
