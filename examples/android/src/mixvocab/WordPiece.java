package mixvocab;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The student's WordPiece tokenization and input packing, as the exported
 * raw-string model does it inside its graph, in plain Java (Android, any JVM;
 * no dependencies), for a builtin-ops .tflite that takes token ids.
 *
 * <p>Normalization, code point by code point, as tensorflow-text's
 * FastBertNormalizer (uncased): default ignorable code points are deleted,
 * other control and format characters become word breaks, private-use
 * characters and U+FFFD are kept (no vocabulary token holds them: their word
 * becomes [UNK]), every other code point is NFKC case-folded and stripped of
 * its accents (NFD, nonspacing marks removed). Then BERT's basic split (at
 * whitespace, around punctuation and CJK ideographs) and greedy
 * longest-match-first WordPiece with "##" continuations; a piece that cannot
 * be cut, or one longer than 100 UTF-8 bytes, is one [UNK].
 *
 * <pre>{@code
 * WordPiece wordPiece = new WordPiece(ModelFiles.read(modelBytes).get("vocab.txt"));
 * WordPiece.Packed packed = wordPiece.packWords("play some jazz", 48);
 * packed.inputWordIds;  // [CLS] play some jazz [SEP], at its own length
 * }</pre>
 */
public final class WordPiece {
  /** Longer pieces (after the basic split) are [UNK], as in the model. */
  public static final int MAX_BYTES_PER_WORD = 100;
  /** Words of a text a classifier reads at most, per token of its budget. */
  public static final int SENTENCE_WORDS_PER_TOKEN = 4;

  /** Stands for a character no token holds (a noncharacter). */
  private static final String UNKNOWN = "\uFDD0";

  private final Map<String, Integer> ids = new HashMap<>();
  public final int pad;
  public final int unk;
  public final int cls;
  public final int sep;

  /** A tokenizer over {@code vocab}: one token a line of vocab.txt. */
  public WordPiece(List<String> vocab) {
    if (vocab == null) {
      throw new IllegalArgumentException("no vocab.txt: give the vocabulary "
          + "packed in the metadata of model_builtin.tflite (ModelFiles.read)");
    }
    for (int i = 0; i < vocab.size(); i++) {
      ids.putIfAbsent(vocab.get(i), i);
    }
    pad = special("[PAD]");
    unk = special("[UNK]");
    cls = special("[CLS]");
    sep = special("[SEP]");
  }

  private int special(String token) {
    Integer id = ids.get(token);
    if (id == null) {
      throw new IllegalArgumentException("vocab.txt has no " + token);
    }
    return id;
  }

  /** A whitespace word of a query: its text and UTF-16 offsets. */
  public static final class Word {
    public final String text;
    public final int start;
    public final int end;
    /** Position of its first piece in the packed ids, or -1 (cut off). */
    public int position = -1;

    Word(String text, int start, int end) {
      this.text = text;
      this.start = start;
      this.end = end;
    }
  }

  /** One text (or pair) packed for the model: the three int32 inputs. */
  public static final class Packed {
    public final int[] inputWordIds;
    public final int[] inputMask;
    public final int[] inputTypeIds;
    /** The query's whitespace words ({@link #packWords}), else empty. */
    public final List<Word> words;

    Packed(int[] inputWordIds, int[] inputTypeIds, List<Word> words) {
      this.inputWordIds = inputWordIds;
      this.inputMask = new int[inputWordIds.length];
      Arrays.fill(this.inputMask, 1);
      this.inputTypeIds = inputTypeIds;
      this.words = words;
    }

    /**
     * The inputs padded with [PAD] (id 0), mask 0, to {@code length}: for
     * runtimes that take fixed shapes only (LiteRT.js, some delegates).
     */
    public Packed padded(int length) {
      if (length < inputWordIds.length) {
        throw new IllegalArgumentException(
            "cannot pad " + inputWordIds.length + " tokens to " + length);
      }
      Packed out = new Packed(Arrays.copyOf(inputWordIds, length),
                              Arrays.copyOf(inputTypeIds, length), words);
      Arrays.fill(out.inputMask, inputWordIds.length, length, 0);
      return out;
    }
  }

  /** The whitespace words of {@code text} (Unicode White_Space). */
  public static List<Word> whitespaceWords(String text) {
    List<Word> words = new ArrayList<>();
    int start = -1;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      boolean space = isWhiteSpace(cp);
      if (space && start >= 0) {
        words.add(new Word(text.substring(start, i), start, i));
        start = -1;
      } else if (!space && start < 0) {
        start = i;
      }
      i += Character.charCount(cp);
    }
    if (start >= 0) {
      words.add(new Word(text.substring(start), start, text.length()));
    }
    return words;
  }

  /** The ids of one text's WordPieces (no special tokens). */
  public List<Integer> pieces(String text) {
    List<Integer> out = new ArrayList<>();
    for (String token : basicTokens(normalize(text))) {
      wordPiece(token, out);
    }
    return out;
  }

  /**
   * Intent-and-slot inputs: each whitespace word tokenized on its own (a
   * word without pieces is one [UNK]), at most {@code seqLength - 2} pieces,
   * {@code [CLS] ... [SEP]} at the query's own length. Each word's
   * {@code position} is that of its first piece, or -1 past the cut (the
   * model does not read it: its tag is O).
   */
  public Packed packWords(String text, int seqLength) {
    int budget = seqLength - 2;
    List<Word> words = whitespaceWords(text);
    List<Integer> packed = new ArrayList<>();
    packed.add(cls);
    for (Word word : words) {
      if (packed.size() - 1 >= budget) {
        break;  // Not read: the words after the cut keep position -1.
      }
      List<Integer> pieces = pieces(word.text);
      if (pieces.isEmpty()) {
        pieces.add(unk);
      }
      word.position = packed.size();
      for (int id : pieces) {
        if (packed.size() - 1 < budget) {
          packed.add(id);
        }
      }
    }
    packed.add(sep);
    return new Packed(toArray(packed), new int[packed.size()], words);
  }

  /**
   * Classifier inputs: {@code [CLS] a [SEP]}, or for a pair ({@code b} not
   * null) {@code [CLS] a [SEP] b [SEP]} with segment ids 1 on b and its
   * [SEP]. When the pieces do not fit in {@code seqLength}, the longer text
   * is cut first. At the texts' own length.
   */
  public Packed packSentences(String a, String b, int seqLength) {
    boolean pair = b != null;
    int budget = seqLength - (pair ? 3 : 2);
    List<Integer> piecesA = sentencePieces(a, SENTENCE_WORDS_PER_TOKEN * budget);
    List<Integer> packed = new ArrayList<>();
    packed.add(cls);
    if (!pair) {
      packed.addAll(piecesA.subList(0, Math.min(budget, piecesA.size())));
      packed.add(sep);
      return new Packed(toArray(packed), new int[packed.size()], Collections.emptyList());
    }
    List<Integer> piecesB = sentencePieces(b, SENTENCE_WORDS_PER_TOKEN * budget);
    int keepA = Math.min(piecesA.size(),
                         Math.max(budget - piecesB.size(), (budget + 1) / 2));
    int keepB = Math.min(piecesB.size(), budget - keepA);
    packed.addAll(piecesA.subList(0, keepA));
    packed.add(sep);
    packed.addAll(piecesB.subList(0, keepB));
    packed.add(sep);
    int[] typeIds = new int[packed.size()];
    Arrays.fill(typeIds, keepA + 2, typeIds.length, 1);
    return new Packed(toArray(packed), typeIds, Collections.emptyList());
  }

  private List<Integer> sentencePieces(String text, int maxWords) {
    List<Integer> out = new ArrayList<>();
    List<Word> words = whitespaceWords(text);
    for (Word word : words.subList(0, Math.min(maxWords, words.size()))) {
      out.addAll(pieces(word.text));
    }
    return out;
  }

  /** {@code text} as the model's normalizer gives it, code point by code point. */
  static String normalize(String text) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      i += Character.charCount(cp);
      int type = Character.getType(cp);
      if (isDefaultIgnorable(cp)) {
        continue;
      } else if (type == Character.CONTROL || type == Character.FORMAT) {
        out.append(' ');
      } else if (cp == 0xFFFD || type == Character.PRIVATE_USE) {
        out.append(UNKNOWN);
      } else if (cp < 0x80) {
        out.append(Character.toLowerCase((char) cp));
      } else {
        String folded = Normalizer.normalize(caseFold(Normalizer.normalize(
            new String(Character.toChars(cp)), Normalizer.Form.NFKC)),
            Normalizer.Form.NFKC);
        // Accents stripped: the nonspacing marks of the decomposition.
        String decomposed = Normalizer.normalize(folded, Normalizer.Form.NFD);
        decomposed.codePoints()
            .filter(c -> Character.getType(c) != Character.NON_SPACING_MARK)
            .forEach(out::appendCodePoint);
      }
    }
    return out.toString();
  }

  /** Unicode's case folding where it differs from lower-casing. */
  private static String caseFold(String text) {
    return text.toLowerCase(Locale.ROOT)
        .replace("\u00DF", "ss").replace("\u1E9E", "ss")
        .replace("\u03C2", "\u03C3").replace("\u0345", "\u03B9");
  }

  /** BERT's basic split: at whitespace, around punctuation and CJK. */
  private static List<String> basicTokens(String text) {
    List<String> tokens = new ArrayList<>();
    StringBuilder token = new StringBuilder();
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      i += Character.charCount(cp);
      if (isWhiteSpace(cp) || isPunctuation(cp) || isCjk(cp)) {
        if (token.length() > 0) {
          tokens.add(token.toString());
          token.setLength(0);
        }
        if (!isWhiteSpace(cp)) {
          tokens.add(new String(Character.toChars(cp)));
        }
      } else {
        token.appendCodePoint(cp);
      }
    }
    if (token.length() > 0) {
      tokens.add(token.toString());
    }
    return tokens;
  }

  /** Greedy longest-match-first pieces of one token, or one [UNK]. */
  private void wordPiece(String token, List<Integer> out) {
    if (token.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES_PER_WORD) {
      out.add(unk);
      return;
    }
    int[] cps = token.codePoints().toArray();
    List<Integer> found = new ArrayList<>();
    for (int start = 0; start < cps.length; ) {
      Integer id = null;
      int end = cps.length;
      for (; end > start; end--) {
        String piece = new String(cps, start, end - start);
        id = ids.get(start > 0 ? "##" + piece : piece);
        if (id != null) {
          break;
        }
      }
      if (id == null) {
        out.add(unk);
        return;
      }
      found.add(id);
      start = end;
    }
    out.addAll(found);
  }

  /** Unicode's White_Space property. */
  static boolean isWhiteSpace(int cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85
        || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A)
        || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F
        || cp == 0x3000;
  }

  /** BERT's punctuation: ASCII symbols and Unicode's punctuation. */
  static boolean isPunctuation(int cp) {
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64)
        || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
      return true;
    }
    switch (Character.getType(cp)) {
      case Character.CONNECTOR_PUNCTUATION:
      case Character.DASH_PUNCTUATION:
      case Character.START_PUNCTUATION:
      case Character.END_PUNCTUATION:
      case Character.INITIAL_QUOTE_PUNCTUATION:
      case Character.FINAL_QUOTE_PUNCTUATION:
      case Character.OTHER_PUNCTUATION:
        return true;
      default:
        return false;
    }
  }

  /** BERT's CJK ideograph blocks. */
  static boolean isCjk(int cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)
        || (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F)
        || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF)
        || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
  }

  /** Unicode's Default_Ignorable_Code_Point property. */
  static boolean isDefaultIgnorable(int cp) {
    return cp == 0x00AD || cp == 0x034F || cp == 0x061C
        || (cp >= 0x115F && cp <= 0x1160) || (cp >= 0x17B4 && cp <= 0x17B5)
        || (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x200B && cp <= 0x200F)
        || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F)
        || cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF
        || cp == 0xFFA0 || (cp >= 0xFFF0 && cp <= 0xFFF8)
        || (cp >= 0x1BCA0 && cp <= 0x1BCA3) || (cp >= 0x1D173 && cp <= 0x1D17A)
        || (cp >= 0xE0000 && cp <= 0xE0FFF);
  }

  private static int[] toArray(List<Integer> values) {
    return values.stream().mapToInt(Integer::intValue).toArray();
  }
}
