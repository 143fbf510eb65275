package mixvocab;

import java.util.ArrayList;
import java.util.List;

/**
 * An intent-and-slot model's outputs read as the raw-string model answers:
 * the intent and its score, each word's tag read at its first piece and
 * decoded as a valid IOB sequence (Viterbi: I-x only after B-x or I-x, never
 * first), each word's score (the probability of its decoded tag; 1 over the
 * tags for a word past the cut, which the model did not read) and each
 * slot's (the lowest of its words'), as {@code mixvocab-predict} gives them.
 *
 * <pre>{@code
 * Map<String, List<String>> files = ModelFiles.read(modelBytes);
 * IntentSlotDecoder decoder =
 *     new IntentSlotDecoder(files.get("intents.txt"), files.get("slot_tags.txt"));
 * WordPiece.Packed packed = wordPiece.packWords(query, seqLength);
 * // ... run the model on packed's three inputs: intent_probs, slot_probs ...
 * IntentSlotDecoder.Result result = decoder.decode(packed, intentProbs, slotProbs);
 * }</pre>
 */
public final class IntentSlotDecoder {
  /** Score of a transition the IOB scheme forbids. */
  public static final double FORBIDDEN = -1e4;
  /**
   * The one intent of a slot tagger: the own-data job trains data without
   * intents (CoNLL files, doccano's sequence labelling) as an intent-and-slot
   * model of this intent alone, which every query gets with score 1.
   */
  public static final String NO_INTENT = "none";

  private final List<String> intents;
  private final List<String> tags;
  private final double[] start;
  private final double[][] transitions;

  /** The decoder of a model's labels: intents.txt and slot_tags.txt. */
  public IntentSlotDecoder(List<String> intents, List<String> tags) {
    if (intents == null || tags == null || intents.isEmpty() || tags.isEmpty()) {
      throw new IllegalArgumentException("no intents.txt or slot_tags.txt: give "
          + "those of an intent-and-slot model's model_builtin.tflite (a "
          + "classifier has labels.txt instead)");
    }
    this.intents = new ArrayList<>(intents);
    this.tags = new ArrayList<>(tags);
    int size = tags.size();
    start = new double[size];
    transitions = new double[size][size];
    for (int j = 0; j < size; j++) {
      if (!prefix(tags.get(j)).equals("I")) {
        continue;
      }
      start[j] = FORBIDDEN;
      for (int i = 0; i < size; i++) {
        if (prefix(tags.get(i)).equals("O") || !type(tags.get(i)).equals(type(tags.get(j)))) {
          transitions[i][j] = FORBIDDEN;
        }
      }
    }
  }

  /**
   * Whether the model is a slot tagger (its one intent is {@link #NO_INTENT}):
   * its answer is the slots; leave {@code result.intent} aside.
   */
  public boolean isSlotTagger() {
    return intents.size() == 1 && intents.get(0).equals(NO_INTENT);
  }

  /** A label and its probability. */
  public static final class Label {
    public final String label;
    public final float score;

    Label(String label, float score) {
      this.label = label;
      this.score = score;
    }
  }

  /** A word of the query with its tag and the tag's probability. */
  public static final class TaggedWord {
    public final String text;
    public final int start;
    public final int end;
    public final String tag;
    public final double score;

    TaggedWord(WordPiece.Word word, String tag, double score) {
      this.text = word.text;
      this.start = word.start;
      this.end = word.end;
      this.tag = tag;
      this.score = score;
    }
  }

  /** A slot: its type, words [start, end) and score (its least sure word's). */
  public static final class Slot {
    public final String type;
    public final int startWord;
    public final int endWord;
    public final double score;

    Slot(String type, int startWord, int endWord, double score) {
      this.type = type;
      this.startWord = startWord;
      this.endWord = endWord;
      this.score = score;
    }
  }

  /** The model's answer for one query. */
  public static final class Result {
    public final String intent;
    public final float score;
    /** Every intent, highest score first. */
    public final List<Label> top;
    public final List<TaggedWord> words;
    public final List<Slot> slots;

    Result(List<Label> top, List<TaggedWord> words, List<Slot> slots) {
      this.intent = top.get(0).label;
      this.score = top.get(0).score;
      this.top = top;
      this.words = words;
      this.slots = slots;
    }
  }

  /**
   * Decodes the model's outputs for {@code packed} (from
   * {@link WordPiece#packWords}): {@code intentProbs} [intents] and
   * {@code slotProbs} [length][tags], the model's outputs of that name.
   */
  public Result decode(WordPiece.Packed packed, float[] intentProbs, float[][] slotProbs) {
    if (intentProbs.length != intents.size()) {
      throw new IllegalArgumentException("intent_probs has " + intentProbs.length
          + " values; intents.txt has " + intents.size() + " intents");
    }
    List<Label> top = new ArrayList<>();
    for (int i = 0; i < intentProbs.length; i++) {
      top.add(new Label(intents.get(i), intentProbs[i]));
    }
    // Highest first, a tie to the lowest id (as an arg-max gives it).
    top.sort((a, b) -> Float.compare(b.score, a.score));
    int kept = 0;
    while (kept < packed.words.size() && packed.words.get(kept).position >= 0) {
      kept++;
    }
    double[][] scores = new double[kept][];
    int positions = packed.inputWordIds.length;
    if (slotProbs.length < positions) {
      throw new IllegalArgumentException("slot_probs has " + slotProbs.length
          + " positions; the packed query has " + positions + ": run the model "
          + "on this query's packed inputs");
    }
    for (int w = 0; w < kept; w++) {
      float[] row = slotProbs[packed.words.get(w).position];
      if (row.length != tags.size()) {
        throw new IllegalArgumentException("slot_probs has " + row.length
            + " tags a position; slot_tags.txt has " + tags.size());
      }
      scores[w] = new double[row.length];
      for (int t = 0; t < row.length; t++) {
        // log(p), finite where p underflowed to 0.
        scores[w][t] = Math.log(Math.max(row[t], 1e-45));
      }
    }
    int[] best = viterbi(scores);
    List<TaggedWord> words = new ArrayList<>();
    for (int w = 0; w < packed.words.size(); w++) {
      words.add(w < kept
          ? new TaggedWord(packed.words.get(w), tags.get(best[w]), Math.exp(scores[w][best[w]]))
          : new TaggedWord(packed.words.get(w), "O", 1.0 / tags.size()));
    }
    return new Result(top, words, slots(words));
  }

  /** The best allowed tag ids of per-word log-probability rows. */
  public int[] viterbi(double[][] scores) {
    int count = scores.length;
    int size = start.length;
    if (count == 0) {
      return new int[0];
    }
    double[] best = new double[size];
    for (int j = 0; j < size; j++) {
      best[j] = start[j] + scores[0][j];
    }
    int[][] pointers = new int[count][size];
    for (int t = 1; t < count; t++) {
      double[] next = new double[size];
      for (int j = 0; j < size; j++) {
        int from = 0;
        double value = best[0] + transitions[0][j];
        for (int i = 1; i < size; i++) {
          double candidate = best[i] + transitions[i][j];
          if (candidate > value) {
            value = candidate;
            from = i;
          }
        }
        next[j] = value + scores[t][j];
        pointers[t][j] = from;
      }
      best = next;
    }
    int[] path = new int[count];
    for (int j = 1; j < size; j++) {
      if (best[j] > best[path[count - 1]]) {
        path[count - 1] = j;
      }
    }
    for (int t = count - 1; t > 0; t--) {
      path[t - 1] = pointers[t][path[t]];
    }
    return path;
  }

  /** The slots of tagged words (conlleval's chunks), each scored. */
  private static List<Slot> slots(List<TaggedWord> words) {
    List<Slot> slots = new ArrayList<>();
    String open = null;
    int from = 0;
    for (int w = 0; w <= words.size(); w++) {
      String tag = w < words.size() ? words.get(w).tag : "O";
      String kind = prefix(tag);
      boolean continues = kind.equals("I") && type(tag).equals(open);
      if (open != null && !continues) {
        slots.add(new Slot(open, from, w, lowest(words.subList(from, w))));
        open = null;
      }
      if (!kind.equals("O") && !continues) {
        open = type(tag);
        from = w;
      }
    }
    return slots;
  }

  private static double lowest(List<TaggedWord> words) {
    return words.stream().mapToDouble(word -> word.score).min().orElse(0);
  }

  private static String prefix(String tag) {
    return tag.startsWith("B-") || tag.startsWith("I-") ? tag.substring(0, 1) : "O";
  }

  private static String type(String tag) {
    return tag.startsWith("B-") || tag.startsWith("I-") ? tag.substring(2) : "";
  }
}
