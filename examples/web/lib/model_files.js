// The files packed in a .tflite with TFLite Model Metadata: such a file is
// also a zip archive (vocab.txt, labels.txt or intents.txt and slot_tags.txt).
import { unzipSync, strFromU8 } from "fflate";

/** {file name: its lines} of the model's associated files. */
export function associatedFiles(modelBytes) {
  let entries;
  try {
    entries = unzipSync(modelBytes);
  } catch (e) {
    throw new Error(
      `the model has no packed files (${e.message}): export it again with ` +
        "metadata (model_builtin.tflite)",
    );
  }
  const files = {};
  for (const [name, bytes] of Object.entries(entries)) {
    const lines = strFromU8(bytes).split(/\r?\n/);
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    files[name] = lines;
  }
  return files;
}
