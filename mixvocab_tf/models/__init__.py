"""Keras models of mixed-vocabulary distillation (Zhao et al., EACL 2021).

Encoders with masked-LM heads (the stage I teacher with one head per vocabulary,
Section 3; the student and the plain teacher with one head), the teacher
checkpoint loader (the one way to build and load a teacher), and the
shared-projection loss of the "dual training" version.
"""

from mixvocab_tf.models.dual_vocab_pretrainer import DualVocabPretrainer
from mixvocab_tf.models.mlm_pretrainer import build_student_pretrainer
from mixvocab_tf.models.mlm_pretrainer import MLMPretrainer
from mixvocab_tf.models.projection_loss import shared_projection_loss
from mixvocab_tf.models.projection_loss import transformer_weight_pairs
from mixvocab_tf.models.teacher_loader import assign_encoder_weights
from mixvocab_tf.models.teacher_loader import assign_masked_lm_weights
from mixvocab_tf.models.teacher_loader import BertCheckpoint
from mixvocab_tf.models.teacher_loader import build_teacher
from mixvocab_tf.models.teacher_loader import detect_checkpoint_format
from mixvocab_tf.models.teacher_loader import encoder_config_from_bert_config
from mixvocab_tf.models.teacher_loader import load_bert_encoder
from mixvocab_tf.models.teacher_loader import load_bert_pretrainer
from mixvocab_tf.models.teacher_loader import load_pretrained_weights
from mixvocab_tf.models.teacher_loader import load_teacher
from mixvocab_tf.models.teacher_loader import read_bert_checkpoint
from mixvocab_tf.models.teacher_loader import read_bert_config
from mixvocab_tf.models.teacher_loader import teacher_encoder_config
from mixvocab_tf.models.joint_intent_slot_model import JointIntentSlotModel
from mixvocab_tf.models.sentence_classifier import SentenceClassifier
