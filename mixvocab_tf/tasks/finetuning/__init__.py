"""Fine-tuning tasks (Zhao et al., EACL 2021, Section 4.2), one folder a kind.

`finetune_task` is the base (where the encoder comes from, vocabulary,
evaluation plumbing), `metrics` scores, `batch_padding` pads batches to
their longest example; the examples come from the data layer
(`mixvocab_tf.datasets`: a user's files, GLUE, SNIPS). Each task kind is a
folder with its `task` (the registered task, which takes a dataset), `data`
(featurizer), `export_module` (serving) and `augment` (transfer-set copies):
`intent_slot/` (joint intent and slots: SNIPS or a user's tagged queries) and
`text_classification/` (SST-2, MRPC, MNLI or a user's labelled texts). A
third kind is a third folder plus one import in `mixvocab_tf/tasks/__init__.py`.
"""
