"""Fast tests of the predictor's records (the models: tests/test_predict.py)."""

import numpy as np

from mixvocab_tf.serving import predictor as predictor_lib


def test_slots_give_character_offsets_of_the_query():
  # The model gives each word's byte offsets in the UTF-8 query: 'Москва'
  # is 6 characters and 12 bytes, the emoji 1 and 4.
  query = "Москва \U0001F600 weather  new york"
  data = query.encode("utf-8")
  words = query.split()
  starts, position = [], 0
  for word in words:
    position = data.index(word.encode("utf-8"), position)
    starts.append(position)
    position += len(word.encode("utf-8"))
  ends = [s + len(w.encode("utf-8")) for s, w in zip(starts, words)]
  outputs = {
      "num_words": np.array([5]),
      "slot_tags": np.array([[b"B-city", b"O", b"O", b"B-city", b"I-city"]],
                            dtype=object),
      "word_starts": np.array([starts]),
      "word_ends": np.array([ends]),
  }
  # pylint: disable-next=protected-access
  record = predictor_lib.Predictor._words_and_slots(None, outputs, 0, data)
  assert record["words"] == words
  assert record["slots"] == [
      {"type": "city", "text": "Москва", "start_word": 0, "end_word": 1,
       "start": 0, "end": 6},
      {"type": "city", "text": "new york", "start_word": 3, "end_word": 5,
       "start": 18, "end": 26},
  ]
  assert query[18:26] == "new york"
