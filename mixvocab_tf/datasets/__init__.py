"""The data layer: reading and checking the examples a fine-tuning task reads.

After Model Garden's `official/nlp/data`: one reader per source, each giving
one example type per task kind (`examples`: `TextClassificationExamples`,
`IntentSlotExamples`), and datasets by name (`catalog`) that a task takes
instead of switches. Featurizing (tokens, ids, padding) stays with the tasks.

- `catalog`: the datasets by name ('glue/sst2', 'glue/mrpc', 'glue/mnli',
  'snips', 'files');
- `user_dataset`: a user's dataset directory, its data contract, checked
  whole (`load_dataset`), and as a task reads it;
- `glue`: SST-2, MRPC and MNLI from GLUE TSV files, the MNLI sample JSON or
  tensorflow-datasets;
- `snips`: SNIPS, the built-in copy (`mixvocab_tf.assets`) or a directory;
- `layout`: finding a directory's splits, and its kind and format;
- `text_classification_files`, `intent_slot_files`: one split of each kind
  (CSV / TSV / JSONL; the Goo et al. layout or JSONL);
- `records`, `decoding`, `errors`: CSV, TSV and JSONL records, UTF-8 lines,
  and the `DataError` whose message names the file, the line, what was
  found, what was expected and the fix.

Imports run one way: this package reads `mixvocab_tf.text` (words the
student cannot read) and `mixvocab_tf.assets` (the SNIPS copy, the student
vocabulary); the tasks read it.
"""
