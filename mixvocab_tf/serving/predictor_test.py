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


def test_slots_are_scored_by_their_least_sure_word():
  # Tags 'O', 'B-city', 'I-city', 'O' (ids 0, 1, 2, 0), each word's logits
  # over the three tags; the last word was cut (zero logits: 1/3).
  logits = np.log(np.array([[[0.9, 0.05, 0.05],
                             [0.2, 0.7, 0.1],
                             [0.1, 0.3, 0.6],
                             [1.0, 1.0, 1.0]]]))
  outputs = {
      "num_words": np.array([4]),
      "slot_tags": np.array([[b"O", b"B-city", b"I-city", b"O"]],
                            dtype=object),
      "slot_ids": np.array([[0, 1, 2, 0]]),
      "slot_logits": logits,
      "words": np.array([[b"to", b"new", b"york", b"now"]], dtype=object),
  }
  # pylint: disable-next=protected-access
  record = predictor_lib.Predictor._words_and_slots(None, outputs, 0,
                                                    b"to new york now")
  np.testing.assert_allclose(record["tag_scores"], [0.9, 0.7, 0.6, 1 / 3])
  [slot] = record["slots"]
  assert (slot["type"], slot["text"]) == ("city", "new york")
  assert slot["score"] == record["tag_scores"][2]
  # Outputs without slot logits (an export that lacks them): no scores.
  del outputs["slot_logits"]
  record = predictor_lib.Predictor._words_and_slots(None, outputs, 0,
                                                    b"to new york now")
  assert "tag_scores" not in record and "score" not in record["slots"][0]
