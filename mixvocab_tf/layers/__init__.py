"""Keras layers of mixed-vocabulary distillation (Zhao et al., EACL 2021).

`DualVocabEmbedding` is the teacher's input over the teacher and student
vocabularies (Section 3, stage I); `SharedProjDown` / `SharedProjUp` are the shared
projections of the paper's earlier "dual training" version.
"""

from mixvocab_tf.layers.dual_vocab_embedding import DualVocabEmbedding
from mixvocab_tf.layers.dual_vocab_embedding import STUDENT_VOCAB_ID
from mixvocab_tf.layers.dual_vocab_embedding import TEACHER_VOCAB_ID
from mixvocab_tf.layers.shared_projection import SharedProjDown
from mixvocab_tf.layers.shared_projection import SharedProjUp
