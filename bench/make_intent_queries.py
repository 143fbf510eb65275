"""Writes a made-up intent dataset of the size the own-data job is timed on.

The own-data job promises: about 15,000 short queries over 150 intents, as
CSV, from the package's pretrained student to the exported .tflite and
report in at most 30 minutes on 2 idle cores. This script makes such a
dataset without downloading one: 150 intents in 15 domains, each intent a
set of actions on the objects of its domain, composed with polite prefixes,
fillers and suffixes; intents of one domain share their objects, so the
words that decide an intent are few. The sizes follow the usual layout of
such sets: 100 train, 20 validation and 30 test queries per intent.

The texts are synthetic: time the job on them, do not read their scores as
a result on real queries.

  python bench/make_intent_queries.py --output_dir=/tmp/intents
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/intents'" --model_dir=/tmp/intents_run
"""

import argparse
import csv
import os
import random

DOMAINS = {
    "banking": ["my checking account", "my savings", "the credit card",
                "my balance", "a wire transfer", "my last deposit",
                "the pin number", "my debit card"],
    "travel": ["my flight", "a hotel room", "the train to boston",
               "a rental car", "my luggage", "the boarding pass",
               "a trip to paris", "my passport"],
    "home": ["the lights", "the thermostat", "the front door",
             "the dishwasher", "the vacuum", "the garage",
             "the kitchen speaker", "the blinds"],
    "music": ["some jazz", "my workout playlist", "the new album",
              "that song", "the radio", "a podcast", "the volume",
              "the next track"],
    "food": ["a pizza", "the recipe for pancakes", "a table for two",
             "my grocery list", "a sushi place", "dinner tonight",
             "the calories in rice", "a coffee"],
    "work": ["the meeting", "my calendar", "the report", "an email to anna",
             "the team call", "my schedule", "the deadline", "a reminder"],
    "weather": ["the forecast", "the rain", "the temperature", "the wind",
                "tomorrow's weather", "the snow", "the humidity",
                "the weekend weather"],
    "shopping": ["my order", "a new phone", "the package", "a gift card",
                 "my cart", "the return", "running shoes", "the receipt"],
    "health": ["my appointment", "the pharmacy", "my prescription",
               "my steps today", "a doctor", "my sleep", "my heart rate",
               "the dentist"],
    "car": ["the oil change", "my tire pressure", "the gas station",
            "my car insurance", "the parking spot", "the car battery",
            "a mechanic", "the traffic"],
    "kids": ["a bedtime story", "the school bus", "the homework",
             "a math game", "the babysitter", "the playground",
             "the soccer practice", "a cartoon"],
    "money": ["my taxes", "the exchange rate", "my budget", "a loan",
              "the stock price", "my bills", "the interest rate",
              "my paycheck"],
    "phone": ["my contacts", "the alarm", "a text message", "the battery",
              "the wifi", "my voicemail", "the ringtone", "the screen"],
    "sports": ["the game score", "the league table", "tickets for saturday",
               "the match", "the next race", "the team roster",
               "the highlights", "the gym"],
    "language": ["this word", "the phrase", "a sentence in spanish",
                 "the spelling", "a synonym", "the meaning of ennui",
                 "the pronunciation", "a translation"],
}
ACTIONS = [
    ("check", ["check", "look up", "show me", "what is"]),
    ("change", ["change", "update", "modify", "edit"]),
    ("cancel", ["cancel", "stop", "call off", "drop"]),
    ("book", ["book", "reserve", "schedule", "set up"]),
    ("find", ["find", "search for", "locate", "where is"]),
    ("share", ["share", "send", "forward", "pass on"]),
    ("remind", ["remind me about", "don't let me forget",
                "set a reminder for", "alert me about"]),
    ("report", ["report a problem with", "something is wrong with",
                "complain about", "there is an issue with"]),
    ("explain", ["explain", "tell me about", "how does", "help me with"]),
    ("rate", ["rate", "review", "give feedback on", "score"]),
]
PREFIXES = ["", "", "", "please", "can you", "could you", "i want to",
            "i need to", "hey", "would you", "i'd like to", "quickly"]
SUFFIXES = ["", "", "", "please", "now", "for me", "today", "right away",
            "thanks", "if you can", "asap", "this evening"]
SIZES = {"train": 100, "validation": 20, "test": 30}


def make_intents():
  """150 (name, action phrases, objects): 15 domains x 10 actions."""
  intents = []
  for domain, objects in DOMAINS.items():
    for action, phrases in ACTIONS:
      intents.append((f"{domain}_{action}", phrases, objects))
  return intents


def query(rng, phrases, objects):
  words = [rng.choice(PREFIXES), rng.choice(phrases), rng.choice(objects),
           rng.choice(SUFFIXES)]
  return " ".join(w for w in words if w)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  rng = random.Random(args.seed)
  intents = make_intents()
  os.makedirs(args.output_dir, exist_ok=True)
  for split, per_intent in SIZES.items():
    rows = [(query(rng, phrases, objects), name)
            for name, phrases, objects in intents
            for _ in range(per_intent)]
    rng.shuffle(rows)
    path = os.path.join(args.output_dir, f"{split}.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
      writer = csv.writer(f)
      writer.writerow(["text", "label"])
      writer.writerows(rows)
    print(f"{path}: {len(rows)} queries, {len(intents)} intents")


if __name__ == "__main__":
  main()
