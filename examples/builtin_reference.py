"""Intent and slots, or a pair's label, from a builtin-ops .tflite without
tensorflow-text.

The reference implementation of docs/SERVING.md, "Deploy": stock LiteRT
(`ai_edge_litert`, builtin op resolver), Hugging Face `tokenizers`' WordPiece
on the vocabulary packed in the model's metadata; for intent and slots, tags
read at each word's first piece and decoded with the valid-IOB constraint;
for a sentence-pair classifier, both texts packed with the longer one cut
first. tests/test_deploy.py runs this file as it is.

  python examples/builtin_reference.py model_builtin.tflite "play some jazz"
  python examples/builtin_reference.py pair_builtin.tflite "a text" "another"
"""
import sys
import zipfile

import numpy as np
from ai_edge_litert.interpreter import Interpreter
from tokenizers import BertWordPieceTokenizer


class IntentSlotModel:
  """Loads the file; calling it on a query gives (intent, one tag per word,
  each tag's probability: a slot's score is the lowest of its words')."""

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
    one = lambda x: np.array([x], np.int32)  # The query at its own length.
    out = self.run(input_word_ids=one(ids), input_mask=one([1] * len(ids)),
                   input_type_ids=one([0] * len(ids)))
    intent = self.intents[int(out["intent_probs"][0].argmax())]
    kept = [f for f in firsts if f <= self.length - 2]  # Cut words: 'O'.
    cut = len(firsts) - len(kept)  # Not read: 1 over the tags.
    if not kept:
      return intent, ["O"] * cut, [1 / len(self.tags)] * cut
    emit = lambda f: np.log(np.maximum(out["slot_probs"][0, f], 1e-30))
    scores = self.start + emit(kept[0])
    paths = [[t] for t in range(len(self.tags))]
    for f in kept[1:]:  # Viterbi: the best valid path ending in each tag.
      best = (scores[:, None] + self.moves).argmax(0)
      scores = scores[best] + self.moves[best, range(len(best))] + emit(f)
      paths = [paths[b] + [t] for t, b in enumerate(best)]
    path = paths[int(scores.argmax())]
    sure = [float(out["slot_probs"][0, f, t]) for f, t in zip(kept, path)]
    return (intent, [self.tags[t] for t in path] + ["O"] * cut,
            sure + [1 / len(self.tags)] * cut)


class PairClassifier:
  """Loads a sentence-pair classifier's file; calling it on two texts gives
  (label, probability)."""

  def __init__(self, path):
    files = zipfile.ZipFile(path)
    read = lambda name: files.read(name).decode("utf-8").splitlines()
    self.labels = read("labels.txt")
    self.vocab = {token: i for i, token in enumerate(read("vocab.txt"))}
    self.wordpiece = BertWordPieceTokenizer(self.vocab, lowercase=True)
    self.run = Interpreter(model_path=path).get_signature_runner()
    self.length = self.run.get_input_details()["input_word_ids"]["shape"][1]

  def pieces(self, text):  # Each word alone; a word may give no piece.
    return [i for word in text.split()
            for i in self.wordpiece.encode(word, add_special_tokens=False).ids]

  def __call__(self, text_a, text_b):
    a, b = self.pieces(text_a), self.pieces(text_b)
    budget = self.length - 3  # Too long: the longer text is cut first.
    keep_a = min(len(a), max(budget - len(b), (budget + 1) // 2))
    a, b = a[:keep_a], b[:budget - keep_a]
    cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
    ids = [cls] + a + [sep] + b + [sep]
    one = lambda x: np.array([x], np.int32)  # The pair at its own length.
    out = self.run(input_word_ids=one(ids), input_mask=one([1] * len(ids)),
                   input_type_ids=one([0] * (len(a) + 2) + [1] * (len(b) + 1)))
    probs = out["probabilities"][0]
    return self.labels[int(probs.argmax())], float(probs.max())


if __name__ == "__main__":
  names = zipfile.ZipFile(sys.argv[1]).namelist()
  if "labels.txt" in names and len(sys.argv) == 4:  # A classifier, a pair.
    print(PairClassifier(sys.argv[1])(*sys.argv[2:]))
  else:
    model = IntentSlotModel(sys.argv[1])
    for query in sys.argv[2:]:
      print(query, model(query))
