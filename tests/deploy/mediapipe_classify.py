"""Classifies texts with MediaPipe Tasks' TextClassifier (no TensorFlow).

Run as a child process by tests/test_deploy.py, the way an app would load the
file: `python mediapipe_classify.py MODEL TEXTS_JSON OUTPUT_JSON`. Writes the
top-1 label and its score of each text, every label's score, and whether
TensorFlow or tensorflow-text was loaded.
"""

import json
import sys


def main(model, texts_json, output_json):
  # MediaPipe's Python package uses TensorFlow for file access when it is
  # installed; an app has none: block it, as on a device.
  sys.modules["tensorflow"] = None
  try:
    # pylint: disable=g-import-not-at-top
    from mediapipe.tasks import python as mp_tasks
    from mediapipe.tasks.python import text as mp_text
    # pylint: enable=g-import-not-at-top
  except ImportError as e:  # Installed apart: see tests/test_deploy.py.
    sys.exit(f"MediaPipe is not installed ({e}): python3.11 -m pip install "
             "--no-deps mediapipe==1.2.3")
  with open(texts_json, encoding="utf-8") as f:
    texts = json.load(f)
  options = mp_text.TextClassifierOptions(
      base_options=mp_tasks.BaseOptions(model_asset_path=model))
  results = []
  with mp_text.TextClassifier.create_from_options(options) as classifier:
    for text in texts:
      categories = classifier.classify(text).classifications[0].categories
      best = max(categories, key=lambda c: c.score)
      results.append({"label": best.category_name, "score": best.score,
                      "scores": {c.category_name: c.score
                                 for c in categories}})
  with open(output_json, "w", encoding="utf-8") as f:
    json.dump({"results": results,
               "tensorflow_loaded": sys.modules.get("tensorflow") is not None,
               "tensorflow_text_loaded": "tensorflow_text" in sys.modules},
              f)


if __name__ == "__main__":
  main(*sys.argv[1:])
