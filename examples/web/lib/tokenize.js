// The student's WordPiece tokenization, as the package's in-graph tokenizer
// does it (mixvocab_tf/export/serving_tokenizer.py): BERT uncased basic
// tokenization, then greedy longest-match-first WordPiece with "##"
// continuation (at most 100 characters a word, else [UNK]), by
// Tokenizers.js (@huggingface/tokenizers) built from the model's vocab.txt.
// Runs in the browser (through the page's import map) and in Node.
//
// The in-graph normalizer (tensorflow_text's FastBertNormalizer) maps each
// code point on its own with Unicode's NFKC case folding, deletes default
// ignorable code points, turns other control and format characters into word
// breaks and keeps private-use characters and U+FFFD (unknown to the
// vocabulary); Tokenizers.js' BertNormalizer lower-cases, deletes every
// control, format and private-use character and splits CJK ideographs of the
// Basic Multilingual Plane only. `fold` below bridges the two before
// Tokenizers.js runs.
import { Tokenizer } from "@huggingface/tokenizers";

// A noncharacter: never a vocabulary token, kept by Tokenizers.js, so the
// word that holds it becomes [UNK] as the private-use character would.
const UNKNOWN = "\uFDD0";
// BERT's CJK ideograph ranges (Tokenizers.js tests UTF-16 code units).
const CJK = /[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u{20000}-\u{2A6DF}\u{2A700}-\u{2CEAF}\u{2F800}-\u{2FA1F}]/gu;
// Where Unicode's case folding differs from toLowerCase().
const FOLDS = { "\u00DF": "ss", "\u1E9E": "ss", "\u03C2": "\u03C3", "\u0345": "\u03B9" };

function foldCodePoint(ch) {
  if (/\p{Default_Ignorable_Code_Point}/u.test(ch)) return "";
  if (/[\p{Cc}\p{Cf}]/u.test(ch)) return " ";
  if (ch === "\uFFFD" || /\p{Co}/u.test(ch)) return UNKNOWN;
  const folded = ch.normalize("NFKC").toLowerCase();
  return [...folded].map((c) => FOLDS[c] ?? c).join("").normalize("NFKC");
}

/** `text` as the in-graph normalizer sees it, before Tokenizers.js. */
export function fold(text) {
  if (/^[\x21-\x7E]*$/.test(text)) return text; // Printable ASCII: as is.
  return [...text].map(foldCodePoint).join("").replace(CJK, " $& ");
}

/** A WordPiece tokenizer over `vocab`, one token per id (vocab.txt lines). */
export function wordPieceTokenizer(vocab) {
  const ids = {};
  vocab.forEach((token, id) => {
    if (!(token in ids)) ids[token] = id;
  });
  for (const special of ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]) {
    if (!(special in ids)) throw new Error(`vocab.txt has no ${special}`);
  }
  const tokenizer = new Tokenizer(
    {
      // No added tokens: a typed "[CLS]" is split like any text, as the
      // in-graph tokenizer splits it.
      added_tokens: [],
      normalizer: {
        type: "BertNormalizer",
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: true,
        lowercase: true,
      },
      pre_tokenizer: { type: "BertPreTokenizer" },
      model: {
        type: "WordPiece",
        vocab: ids,
        unk_token: "[UNK]",
        continuing_subword_prefix: "##",
        max_input_chars_per_word: 100,
      },
      // Pieces only: the packing below adds [CLS] and [SEP].
      post_processor: null,
      decoder: { type: "WordPiece", prefix: "##", cleanup: false },
    },
    {},
  );
  return {
    tokenizer,
    pad: ids["[PAD]"],
    unk: ids["[UNK]"],
    cls: ids["[CLS]"],
    sep: ids["[SEP]"],
    /** The ids of one text's WordPieces (no special tokens). */
    pieces(text) {
      return tokenizer.encode(fold(text), { add_special_tokens: false }).ids;
    },
  };
}

/** The whitespace words of `text` (Unicode White_Space, as tensorflow_text's
 * WhitespaceTokenizer splits), each {text, start, end} in UTF-16 offsets. */
export function whitespaceWords(text) {
  return [...text.matchAll(/[^\p{White_Space}]+/gu)].map((m) => ({
    text: m[0],
    start: m.index,
    end: m.index + m[0].length,
  }));
}

function features(ids, length) {
  const inputWordIds = new Int32Array(length);
  const inputMask = new Int32Array(length);
  ids.forEach((id, i) => {
    inputWordIds[i] = id;
    inputMask[i] = 1;
  });
  return { inputWordIds, inputMask, inputTypeIds: new Int32Array(length) };
}

/**
 * Intent and slot features: each whitespace word tokenized on its own (a word
 * without pieces gets one [UNK]), at most `length - 2` pieces in all,
 * `[CLS] ... [SEP]`, then [PAD] with mask 0 up to `length`.
 *
 * Returns {inputWordIds, inputMask, inputTypeIds} (Int32Array [length]) and
 * `words`: every whitespace word with `pieces` (its ids) and `position` (of
 * its first piece, or -1 when that falls past `length - 2` pieces).
 */
export function packWords(wordPiece, text, length) {
  const budget = length - 2;
  const words = whitespaceWords(text);
  const ids = [wordPiece.cls];
  for (const word of words) {
    let pieces = wordPiece.pieces(word.text);
    if (pieces.length === 0) pieces = [wordPiece.unk];
    word.pieces = pieces;
    word.position = ids.length - 1 < budget ? ids.length : -1;
    for (const id of pieces) if (ids.length - 1 < budget) ids.push(id);
  }
  ids.push(wordPiece.sep);
  return { ...features(ids, length), words };
}

/** Words a text of `budget` pieces reads at most (the package's
 * SENTENCE_WORDS_PER_TOKEN: room for words that give no piece). */
const SENTENCE_WORDS_PER_TOKEN = 4;

/** The pieces of a whole text: its first `maxWords` whitespace words, each
 * tokenized on its own (a word without pieces gives none). */
function sentencePieces(wordPiece, text, maxWords) {
  return whitespaceWords(text)
    .slice(0, maxWords)
    .flatMap((word) => wordPiece.pieces(word.text));
}

/**
 * Classifier features, as the package's `ServingTokenizer.pack_sentences`
 * gives them: `[CLS] a [SEP]`, or for a pair `[CLS] a [SEP] b [SEP]` with
 * segment ids 1 on b and its `[SEP]`. When the pieces do not fit in
 * `length`, the longer text is cut first (round robin: a gets half the
 * budget, the odd piece on a tie, or what b leaves over). [PAD] with mask 0
 * up to `length`.
 *
 * Returns {inputWordIds, inputMask, inputTypeIds} (Int32Array [length]).
 */
export function packSentences(wordPiece, textA, textB, length) {
  const pair = textB !== undefined && textB !== null;
  const budget = length - (pair ? 3 : 2);
  const maxWords = SENTENCE_WORDS_PER_TOKEN * budget;
  const a = sentencePieces(wordPiece, textA, maxWords);
  if (!pair) {
    return features([wordPiece.cls, ...a.slice(0, budget), wordPiece.sep], length);
  }
  const b = sentencePieces(wordPiece, textB, maxWords);
  const keepA = Math.min(a.length, Math.max(budget - b.length, Math.floor((budget + 1) / 2)));
  const keepB = Math.min(b.length, budget - keepA);
  const packed = features(
    [wordPiece.cls, ...a.slice(0, keepA), wordPiece.sep, ...b.slice(0, keepB), wordPiece.sep],
    length,
  );
  packed.inputTypeIds.fill(1, keepA + 2, keepA + keepB + 3);
  return packed;
}
