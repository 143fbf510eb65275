"""Intent and slots from a builtin-ops .tflite without tensorflow-text.

The reference implementation of docs/SERVING.md, "Deploy": stock LiteRT
(`ai_edge_litert`, builtin op resolver), Hugging Face `tokenizers`' WordPiece
on the vocabulary packed in the model's metadata, tags read at each word's
first piece and decoded with the valid-IOB constraint. tests/test_deploy.py
runs this file as it is.

  python examples/builtin_reference.py model_builtin.tflite "play some jazz"
"""
import sys
import zipfile

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from tokenizers import BertWordPieceTokenizer


class IntentSlotModel:
  """Loads the file; calling it on a query gives (intent, one tag per word)."""

  def __init__(self, path):
    files = zipfile.ZipFile(path)  # Metadata's associated files are a zip.
    read = lambda name: files.read(name).decode("utf-8").splitlines()
    self.intents, self.tags = read("intents.txt"), read("slot_tags.txt")
    self.vocab = {token: i for i, token in enumerate(read("vocab.txt"))}
    self.wordpiece = BertWordPieceTokenizer(self.vocab, lowercase=True)
    self.run = Interpreter(model_path=path).get_signature_runner()
    self.length = self.run.get_input_details()["input_word_ids"]["shape"][1]
    iob = [t.split("-", 1) if t[:2] in ("B-", "I-") else ["O", t]
           for t in self.tags]  # I-x may only follow B-x or I-x.
    self.start = np.array([-1e4 * (p == "I") for p, _ in iob])
    self.moves = np.array([[-1e4 * (q == "I" and (p == "O" or x != y))
                            for q, y in iob] for p, x in iob])

  def __call__(self, query):
    pieces, firsts = [], []
    for word in query.split():  # Each word alone: its pieces are its own.
      firsts.append(1 + len(pieces))
      pieces += (self.wordpiece.encode(word, add_special_tokens=False).ids
                 or [self.vocab["[UNK]"]])
    ids = ([self.vocab["[CLS]"]] + pieces[:self.length - 2] +
           [self.vocab["[SEP]"]])
    pad = lambda x: np.array([x + [0] * (self.length - len(x))], np.int32)
    out = self.run(input_word_ids=pad(ids), input_mask=pad([1] * len(ids)),
                   input_type_ids=pad([0]))
    intent = self.intents[int(out["intent_probs"][0].argmax())]
    kept = [f for f in firsts if f <= self.length - 2]  # Cut words: 'O'.
    if not kept:
      return intent, ["O"] * len(firsts)
    emit = lambda f: np.log(np.maximum(out["slot_probs"][0, f], 1e-30))
    scores = self.start + emit(kept[0])
    paths = [[t] for t in range(len(self.tags))]
    for f in kept[1:]:  # Viterbi: the best valid path ending in each tag.
      best = (scores[:, None] + self.moves).argmax(0)
      scores = scores[best] + self.moves[best, range(len(best))] + emit(f)
      paths = [paths[b] + [t] for t, b in enumerate(best)]
    tags = [self.tags[t] for t in paths[int(scores.argmax())]]
    return intent, tags + ["O"] * (len(firsts) - len(kept))


if __name__ == "__main__":
  model = IntentSlotModel(sys.argv[1])
  for query in sys.argv[2:]:
    print(query, model(query))
