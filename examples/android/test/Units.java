import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import mixvocab.IntentSlotDecoder;
import mixvocab.ModelFiles;
import mixvocab.WordPiece;

/**
 * The Java tokenizer and decoder on their own, for the Python tests
 * (tests/test_android_reference.py), JSON in on stdin and out on stdout:
 *
 * <pre>
 *   java Units tokenize  model.tflite length  < texts.json
 *     -> [{input_word_ids, input_mask, input_type_ids, positions}], padded to length
 *   java Units sentences model.tflite length  < texts.json (a text or [a, b] each)
 *     -> [{input_word_ids, input_mask, input_type_ids}], padded to length
 *   java Units viterbi  < {"tags": [...], "scores": [[[...]]]}  -> tag ids of each
 *   java Units decode    model.tflite length  < [{text, intent_probs, slot_probs}]
 *     -> [{intent, score, words: [{tag, score}], slots: [{type, start, end, score}],
 *          slot_tagger}]
 *   java Units errors  < null   -> the message of each bad call (null: none thrown)
 * </pre>
 */
public final class Units {
  public static void main(String[] args) throws IOException {
    Object input = new Json(new String(System.in.readAllBytes(), StandardCharsets.UTF_8)).value();
    List<Object> output = new ArrayList<>();
    String command = args.length > 0 ? args[0] : "";
    if (command.equals("viterbi")) {
      Map<?, ?> request = (Map<?, ?>) input;
      IntentSlotDecoder decoder = new IntentSlotDecoder(List.of("x"), strings(request.get("tags")));
      for (Object matrix : (List<?>) request.get("scores")) {
        List<?> rows = (List<?>) matrix;
        double[][] scores = new double[rows.size()][];
        for (int i = 0; i < rows.size(); i++) {
          scores[i] = ((List<?>) rows.get(i)).stream()
              .mapToDouble(v -> ((Number) v).doubleValue()).toArray();
        }
        List<Object> ids = new ArrayList<>();
        for (int id : decoder.viterbi(scores)) {
          ids.add(id);
        }
        output.add(ids);
      }
    } else if (command.equals("errors")) {
      // Bad input: each call's message, or null where none was thrown.
      List<String> vocab = List.of("[PAD]", "[UNK]", "[CLS]", "[SEP]", "play");
      IntentSlotDecoder decoder = new IntentSlotDecoder(List.of("a", "b"), List.of("O", "B-x", "I-x"));
      WordPiece.Packed packed = new WordPiece(vocab).packWords("play play", 8);
      output.add(message(() -> new WordPiece(null)));
      output.add(message(() -> new WordPiece(List.of("[PAD]", "[UNK]", "[SEP]"))));
      output.add(message(() -> new IntentSlotDecoder(null, List.of("O"))));
      output.add(message(() -> ModelFiles.read(new byte[64])));
      byte[] cut = new byte[64];
      cut[40] = 0x50;  // An end record whose directory lies past the end.
      cut[41] = 0x4b;
      cut[42] = 0x05;
      cut[43] = 0x06;
      cut[50] = 1;
      cut[56] = 0x7f;
      output.add(message(() -> ModelFiles.read(cut)));
      output.add(message(() -> decoder.decode(packed, new float[3], new float[4][3])));
      output.add(message(() -> decoder.decode(packed, new float[2], new float[2][3])));
      output.add(message(() -> decoder.decode(packed, new float[2], new float[4][5])));
      output.add(message(() -> packed.padded(2)));
      output.add(message(() -> decoder.decode(packed, new float[2], new float[4][3])));
    } else if (args.length == 3) {
      Map<String, List<String>> files = ModelFiles.read(Files.readAllBytes(Paths.get(args[1])));
      WordPiece wordPiece = new WordPiece(files.get("vocab.txt"));
      int length = Integer.parseInt(args[2]);
      // Only an intent-and-slot model has its labels (a classifier has not).
      IntentSlotDecoder decoder = command.equals("decode")
          ? new IntentSlotDecoder(files.get("intents.txt"),
                                  files.get("slot_tags.txt"))
          : null;
      for (Object item : (List<?>) input) {
        if (command.equals("tokenize")) {
          WordPiece.Packed packed = wordPiece.packWords((String) item, length);
          Map<String, Object> features = features(packed.padded(length));
          List<Object> positions = new ArrayList<>();
          packed.words.forEach(word -> positions.add(word.position));
          features.put("positions", positions);
          output.add(features);
        } else if (command.equals("sentences")) {
          List<String> texts = item instanceof String ? List.of((String) item) : strings(item);
          output.add(features(wordPiece.packSentences(
              texts.get(0), texts.size() > 1 ? texts.get(1) : null, length).padded(length)));
        } else if (decoder != null) {
          Map<?, ?> request = (Map<?, ?>) item;
          WordPiece.Packed packed = wordPiece.packWords((String) request.get("text"), length);
          List<?> rows = (List<?>) request.get("slot_probs");
          float[][] slotProbs = new float[rows.size()][];
          for (int i = 0; i < rows.size(); i++) {
            slotProbs[i] = floats(rows.get(i));
          }
          Map<String, Object> result =
              result(decoder.decode(packed, floats(request.get("intent_probs")), slotProbs));
          result.put("slot_tagger", decoder.isSlotTagger());
          output.add(result);
        } else {
          usage();
        }
      }
    } else {
      usage();
    }
    System.out.println(Json.write(output));
  }

  private static String message(Runnable call) {
    try {
      call.run();
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  private static void usage() {
    System.err.println("usage: java Units tokenize|sentences|decode <model.tflite> <length> | viterbi | errors");
    System.exit(2);
  }

  private static Map<String, Object> features(WordPiece.Packed packed) {
    Map<String, Object> features = new LinkedHashMap<>();
    features.put("input_word_ids", ints(packed.inputWordIds));
    features.put("input_mask", ints(packed.inputMask));
    features.put("input_type_ids", ints(packed.inputTypeIds));
    return features;
  }

  private static Map<String, Object> result(IntentSlotDecoder.Result result) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("intent", result.intent);
    out.put("score", (double) result.score);
    List<Object> words = new ArrayList<>();
    for (IntentSlotDecoder.TaggedWord word : result.words) {
      Map<String, Object> w = new LinkedHashMap<>();
      w.put("text", word.text);
      w.put("start", word.start);
      w.put("end", word.end);
      w.put("tag", word.tag);
      w.put("score", word.score);
      words.add(w);
    }
    out.put("words", words);
    List<Object> slots = new ArrayList<>();
    for (IntentSlotDecoder.Slot slot : result.slots) {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("type", slot.type);
      s.put("start", slot.startWord);
      s.put("end", slot.endWord);
      s.put("score", slot.score);
      slots.add(s);
    }
    out.put("slots", slots);
    return out;
  }

  private static List<Object> ints(int[] values) {
    List<Object> out = new ArrayList<>();
    for (int value : values) {
      out.add(value);
    }
    return out;
  }

  private static float[] floats(Object values) {
    List<?> list = (List<?>) values;
    float[] out = new float[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ((Number) list.get(i)).floatValue();
    }
    return out;
  }

  private static List<String> strings(Object values) {
    List<String> out = new ArrayList<>();
    for (Object value : (List<?>) values) {
      out.add((String) value);
    }
    return out;
  }

  /** Just enough JSON: objects, arrays, strings, numbers, true, false, null. */
  static final class Json {
    private final String text;
    private int at;

    Json(String text) {
      this.text = text;
    }

    Object value() {
      skipSpace();
      char c = text.charAt(at);
      if (c == '{') {
        Map<String, Object> object = new LinkedHashMap<>();
        at++;
        skipSpace();
        if (text.charAt(at) == '}') {
          at++;
          return object;
        }
        while (true) {
          skipSpace();
          String key = string();
          skipSpace();
          expect(':');
          object.put(key, value());
          skipSpace();
          if (text.charAt(at++) == '}') {
            return object;
          }
        }
      }
      if (c == '[') {
        List<Object> array = new ArrayList<>();
        at++;
        skipSpace();
        if (text.charAt(at) == ']') {
          at++;
          return array;
        }
        while (true) {
          array.add(value());
          skipSpace();
          if (text.charAt(at++) == ']') {
            return array;
          }
        }
      }
      if (c == '"') {
        return string();
      }
      for (String word : new String[] {"true", "false", "null"}) {
        if (text.startsWith(word, at)) {
          at += word.length();
          return word.equals("null") ? null : Boolean.valueOf(word);
        }
      }
      int start = at;
      while (at < text.length() && "+-.eE0123456789".indexOf(text.charAt(at)) >= 0) {
        at++;
      }
      return Double.parseDouble(text.substring(start, at));
    }

    private String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        char c = text.charAt(at++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = text.charAt(at++);
        switch (e) {
          case 'n': out.append('\n'); break;
          case 't': out.append('\t'); break;
          case 'r': out.append('\r'); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'u':
            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            at += 4;
            break;
          default: out.append(e);
        }
      }
    }

    private void expect(char c) {
      if (text.charAt(at++) != c) {
        throw new IllegalArgumentException("expected " + c + " at " + (at - 1));
      }
    }

    private void skipSpace() {
      while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
        at++;
      }
    }

    static String write(Object value) {
      if (value == null) {
        return "null";
      }
      if (value instanceof String) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : ((String) value).toCharArray()) {
          if (c == '"' || c == '\\') {
            out.append('\\').append(c);
          } else if (c < 0x20 || c > 0x7E) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
        return out.append('"').toString();
      }
      if (value instanceof Map) {
        List<String> parts = new ArrayList<>();
        ((Map<?, ?>) value).forEach((k, v) -> parts.add(write(k) + ":" + write(v)));
        return "{" + String.join(",", parts) + "}";
      }
      if (value instanceof List) {
        List<String> parts = new ArrayList<>();
        ((List<?>) value).forEach(v -> parts.add(write(v)));
        return "[" + String.join(",", parts) + "]";
      }
      return String.valueOf(value);
    }
  }
}
