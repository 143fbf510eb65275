"""Joint intent detection and slot filling: one intent and IOB word tags.

`task` (`IntentSlotTask`, registered as `intent_slot`), `data` (labels,
featurizing, decoding), `export_module` (serving), `augment` (transfer-set
copies). SNIPS is the built-in dataset of this kind (`datasets.snips`).
"""
