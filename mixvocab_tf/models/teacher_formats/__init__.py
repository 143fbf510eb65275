"""Readers of pretrained BERT checkpoints, one module per format.

Each format module (`huggingface`, `google_research`) turns its checkpoint
into the one in-memory form of `bert_checkpoint.BertCheckpoint`: google-research
variable names, [in, out] kernels, float32 NumPy arrays, and `BertEncoderV2`
keyword arguments. `models.teacher_loader` tells the formats apart and builds
the Keras teachers from that form, so a new format is one new module here.
"""
