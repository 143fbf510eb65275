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

/** What the metadata of a sentence-pair classifier's file says of it (the
 * package's `builtin_model.PAIR_DESCRIPTION`). */
export const PAIR_DESCRIPTION = "the label of a pair of texts";

/** Where the model's bytes hold `text` (UTF-8), or -1: its metadata's
 * description is stored as such a string. */
export function findText(modelBytes, text) {
  const needle = new TextEncoder().encode(text);
  const last = modelBytes.length - needle.length;
  for (let i = modelBytes.indexOf(needle[0]); i !== -1 && i <= last; i = modelBytes.indexOf(needle[0], i + 1)) {
    if (needle.every((byte, j) => modelBytes[i + j] === byte)) return i;
  }
  return -1;
}

// A .tflite is a FlatBuffer (LiteRT's schema.fbs): the few fields read here.
const MODEL_SUBGRAPHS = 2;
const SUBGRAPH_TENSORS = 0;
const SUBGRAPH_INPUTS = 1;
const SUBGRAPH_OUTPUTS = 2;
const TENSOR_SHAPE = 0;
const TENSOR_SHAPE_SIGNATURE = 7;

// Readers of the FlatBuffer in `bytes` (little-endian; a table's fields are
// found through its vtable, an offset field points forward from itself).
function flatBuffer(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const follow = (at) => at + view.getUint32(at, true);
  // A vector field of `table`: its elements' start and count, or null.
  const vector = (table, id) => {
    const vtable = table - view.getInt32(table, true);
    if (4 + 2 * id >= view.getUint16(vtable, true)) return null;
    const offset = view.getUint16(vtable + 4 + 2 * id, true);
    if (!offset) return null;
    const start = follow(table + offset);
    return { start: start + 4, length: view.getUint32(start, true) };
  };
  return { view, root: follow(0), vector, follow };
}

/**
 * The model's bytes with each input and output of its main graph that takes
 * any length ([1, -1] inputs, [1, -1, tags] slot probabilities) fixed at the
 * length of its `shape` (the export's seq_length): LiteRT.js compiles fixed
 * shapes only. A copy; the model computes the same (positions past the text
 * are padding, masked).
 */
export function withFixedShapes(modelBytes) {
  const bytes = modelBytes.slice();
  const { view, root, vector, follow } = flatBuffer(bytes);
  const subgraph = follow(vector(root, MODEL_SUBGRAPHS).start);
  const tensors = vector(subgraph, SUBGRAPH_TENSORS);
  for (const field of [SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS]) {
    const indices = vector(subgraph, field);
    for (let i = 0; i < indices.length; i++) {
      const index = view.getInt32(indices.start + 4 * i, true);
      const tensor = follow(tensors.start + 4 * index);
      const shape = vector(tensor, TENSOR_SHAPE);
      const signature = vector(tensor, TENSOR_SHAPE_SIGNATURE);
      if (!shape || !signature || shape.length !== signature.length) continue;
      for (let d = 0; d < shape.length; d++) {
        if (view.getInt32(signature.start + 4 * d, true) === -1) {
          view.setInt32(signature.start + 4 * d, view.getInt32(shape.start + 4 * d, true), true);
        }
      }
    }
  }
  return bytes;
}
