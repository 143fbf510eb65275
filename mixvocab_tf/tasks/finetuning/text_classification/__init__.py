"""Text (pair) classification: one label per text or pair of texts.

`task` (`TextClassificationTask`, registered as `text_classification`),
`data` (featurizing), `export_module` (serving), `augment` (transfer-set
copies). SST-2, MRPC and MNLI are built-in datasets of this kind
(`datasets.glue`).
"""
