// The page's tokenizer and IOB decoder on their own, for the Python tests:
//
//   node test/units.mjs tokenize <model.tflite> <length>  < texts.json
//     -> [{input_word_ids, input_mask, input_type_ids, positions}] per text
//        (positions: each whitespace word's first-piece position, or -1)
//   node test/units.mjs sentences <model.tflite> <length>  < texts.json
//     -> [{input_word_ids, input_mask, input_type_ids}] per text or [a, b]
//   node test/units.mjs viterbi  < {"tags": [...], "scores": [[[...]]]}
//     -> the tag ids of each score matrix
import { readFileSync } from "node:fs";
import { associatedFiles } from "../lib/model_files.js";
import { wordPieceTokenizer, packWords, packSentences } from "../lib/tokenize.js";
import { allowedTransitions, viterbi } from "../lib/iob.js";

const [command, ...args] = process.argv.slice(2);
const input = JSON.parse(readFileSync(0, "utf8"));
let output;
if (command === "tokenize") {
  const [modelPath, length] = args;
  const files = associatedFiles(new Uint8Array(readFileSync(modelPath)));
  const wordPiece = wordPieceTokenizer(files["vocab.txt"]);
  output = input.map((text) => {
    const packed = packWords(wordPiece, text, Number(length));
    return {
      input_word_ids: Array.from(packed.inputWordIds),
      input_mask: Array.from(packed.inputMask),
      input_type_ids: Array.from(packed.inputTypeIds),
      positions: packed.words.map((w) => w.position),
    };
  });
} else if (command === "sentences") {
  const [modelPath, length] = args;
  const files = associatedFiles(new Uint8Array(readFileSync(modelPath)));
  const wordPiece = wordPieceTokenizer(files["vocab.txt"]);
  output = input.map((text) => {
    const packed = Array.isArray(text)
      ? packSentences(wordPiece, text[0], text[1], Number(length))
      : packSentences(wordPiece, text, null, Number(length));
    return {
      input_word_ids: Array.from(packed.inputWordIds),
      input_mask: Array.from(packed.inputMask),
      input_type_ids: Array.from(packed.inputTypeIds),
    };
  });
} else if (command === "viterbi") {
  const constraint = allowedTransitions(input.tags);
  output = input.scores.map((scores) => viterbi(scores, constraint));
} else {
  console.error("usage: node test/units.mjs tokenize|sentences <model.tflite> <length> | viterbi");
  process.exit(2);
}
console.log(JSON.stringify(output));
