"""Vocabularies, mixed-vocabulary tokenization, masking and packing, in graph."""

from mixvocab_tf.text.masking import mask_batch
from mixvocab_tf.text.masking import MaskingConfig
from mixvocab_tf.text.mixed_vocab_tokenizer import MixedVocabTokenizer
from mixvocab_tf.text.mixed_vocab_tokenizer import split_words
from mixvocab_tf.text.mixed_vocab_tokenizer import STUDENT_VOCAB_ID
from mixvocab_tf.text.mixed_vocab_tokenizer import TEACHER_VOCAB_ID
from mixvocab_tf.text.pretraining_input import FEATURE_NAMES
from mixvocab_tf.text.pretraining_input import pretraining_dataset
from mixvocab_tf.text.pretraining_input import PretrainingInputConfig
from mixvocab_tf.text.vocab import load_vocab
from mixvocab_tf.text.vocab import vocab_fingerprint
