package mixvocab;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * The text files packed in a builtin-ops .tflite with TFLite Model Metadata
 * (vocab.txt, and labels.txt or intents.txt and slot_tags.txt): such a file
 * is also a zip archive, read here from its bytes (an app's asset) by its
 * central directory.
 */
public final class ModelFiles {
  private static final int END_OF_DIRECTORY = 0x06054b50;
  private static final int DIRECTORY_ENTRY = 0x02014b50;
  private static final int LOCAL_HEADER = 0x04034b50;

  private ModelFiles() {}

  /** {file name: its lines} of the model's packed files. */
  public static Map<String, List<String>> read(byte[] model) {
    try {
      return readZip(model);
    } catch (IndexOutOfBoundsException e) {
      throw new IllegalArgumentException("the model's packed files are damaged "
          + "(a cut or edited file?)", e);
    }
  }

  private static Map<String, List<String>> readZip(byte[] model) {
    ByteBuffer bytes = ByteBuffer.wrap(model).order(ByteOrder.LITTLE_ENDIAN);
    int end = model.length - 22;  // The end record, before any comment.
    while (end >= 0 && bytes.getInt(end) != END_OF_DIRECTORY) {
      end--;
    }
    if (end < 0) {
      throw new IllegalArgumentException("the model has no packed files: export "
          + "it again with metadata (model_builtin.tflite)");
    }
    int entries = (bytes.getShort(end + 10) & 0xFFFF);
    int at = bytes.getInt(end + 16);
    Map<String, List<String>> files = new HashMap<>();
    for (int e = 0; e < entries; e++) {
      if (bytes.getInt(at) != DIRECTORY_ENTRY) {
        throw new IllegalArgumentException("the model's packed files are damaged");
      }
      int method = (bytes.getShort(at + 10) & 0xFFFF);
      int packedSize = bytes.getInt(at + 20);
      int size = bytes.getInt(at + 24);
      int nameLength = (bytes.getShort(at + 28) & 0xFFFF);
      int extraLength = (bytes.getShort(at + 30) & 0xFFFF);
      int commentLength = (bytes.getShort(at + 32) & 0xFFFF);
      int local = bytes.getInt(at + 42);
      String name = new String(model, at + 46, nameLength, StandardCharsets.UTF_8);
      int data = local + 30 + (bytes.getShort(local + 26) & 0xFFFF)
          + (bytes.getShort(local + 28) & 0xFFFF);
      if (bytes.getInt(local) != LOCAL_HEADER) {
        throw new IllegalArgumentException("the model's packed files are damaged");
      }
      byte[] content = method == 0
          ? Arrays.copyOfRange(model, data, data + size)
          : inflate(model, data, packedSize, size);
      files.put(name, lines(new String(content, StandardCharsets.UTF_8)));
      at += 46 + nameLength + extraLength + commentLength;
    }
    return files;
  }

  private static byte[] inflate(byte[] model, int offset, int packedSize, int size) {
    Inflater inflater = new Inflater(true);  // Zip's raw deflate.
    inflater.setInput(model, offset, packedSize);
    byte[] out = new byte[size];
    try {
      int done = 0;
      while (done < size && !inflater.finished()) {
        done += inflater.inflate(out, done, size - done);
      }
    } catch (DataFormatException e) {
      throw new IllegalArgumentException("the model's packed files are damaged", e);
    } finally {
      inflater.end();
    }
    return out;
  }

  private static List<String> lines(String text) {
    List<String> lines = Arrays.asList(text.split("\r?\n", -1));
    return lines.isEmpty() || !lines.get(lines.size() - 1).isEmpty()
        ? lines : lines.subList(0, lines.size() - 1);
  }
}
