// The two runtimes: MediaPipe Tasks' TextClassifier for a text classifier,
// LiteRT.js for a sentence-pair classifier and for intent and slots. Their
// wasm comes from node_modules on the same server: nothing is fetched from
// elsewhere.
import { FilesetResolver, TextClassifier } from "@mediapipe/tasks-text";
import { loadLiteRt, loadAndCompile, Tensor } from "@litertjs/core";
import { associatedFiles, findText, PAIR_DESCRIPTION, withFixedShapes } from "./model_files.js";
import { wordPieceTokenizer, packWords, packSentences } from "./tokenize.js";
import { allowedTransitions, viterbi, iobSpans } from "./iob.js";

const MEDIAPIPE_WASM = new URL("../node_modules/@mediapipe/tasks-text/wasm", import.meta.url).href;
const LITERT_WASM = new URL("../node_modules/@litertjs/core/wasm/", import.meta.url).href;

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function need(files, name) {
  if (!files[name]) {
    const hint = files["intents.txt"]
      ? ": it is an intent and slot model (?intent_slot=)"
      : files["labels.txt"]
        ? ": it is a text classifier (?classifier=)"
        : "";
    throw new Error(`the model packs no ${name} (it packs ${Object.keys(files).join(", ") || "nothing"})${hint}`);
  }
  return files[name];
}

/**
 * A text classifier (model_builtin.tflite of a text classification export).
 * One text: run by MediaPipe Tasks, which reads the vocabulary and labels
 * from the model's metadata and tokenizes itself. A sentence-pair classifier
 * (its metadata says so): run by LiteRT.js on the ids of the page's
 * tokenizer, which packs both texts, as MediaPipe's TextClassifier takes one.
 * predict(text) or predict(textA, textB) -> {label, score, top: [{label,
 * score}]}.
 */
export async function loadClassifier(url) {
  const bytes = await fetchBytes(url);
  const files = associatedFiles(bytes);
  const labels = need(files, "labels.txt");
  if (findText(bytes, PAIR_DESCRIPTION) !== -1) return loadPairClassifier(bytes, files, labels);
  const fileset = await FilesetResolver.forTextTasks(MEDIAPIPE_WASM);
  const classifier = await TextClassifier.createFromOptions(fileset, {
    baseOptions: { modelAssetBuffer: bytes, delegate: "CPU" },
    maxResults: -1,
  });
  return {
    kind: "classifier",
    runtime: "MediaPipe Tasks TextClassifier",
    description: `${labels.length} labels`,
    async predict(text) {
      // MediaPipe's tokenizer keeps accents; the student was trained on
      // accent-stripped text (docs/SERVING.md, "Deploy"): strip them first.
      const result = classifier.classify(
        text.normalize("NFD").replace(/\p{Mn}/gu, ""));
      return ranked(result.classifications[0].categories.map((c) => ({
        label: c.categoryName || labels[c.index],
        score: c.score,
        id: c.index,
      })));
    },
  };
}

// The labels by score, highest first (a tie to the lowest id, as an arg-max
// gives it): {label, score, top}.
function ranked(top) {
  top.sort((a, b) => b.score - a.score || a.id - b.id);
  return { label: top[0].label, score: top[0].score, top };
}

let liteRtLoaded = null;

/** A model compiled by LiteRT.js (wasm, CPU) and its sequence length. The
 * builtin files take any length: LiteRT.js compiles them at their export's
 * seq_length. */
async function compile(bytes) {
  liteRtLoaded ??= loadLiteRt(LITERT_WASM);
  await liteRtLoaded;
  const model = await loadAndCompile(withFixedShapes(bytes), { accelerator: "wasm" });
  const inputs = model.getInputDetails();
  const idsInput = inputs.find((d) => d.name.includes("input_word_ids"));
  if (!idsInput) {
    throw new Error(`the model has no input_word_ids input (it has ${inputs.map((d) => d.name).join(", ")})`);
  }
  return { model, length: idsInput.shape[1] };
}

/** The model's outputs on packed features, as Float32Arrays by name. */
async function run(model, packed, length) {
  const feed = {
    input_word_ids: new Tensor(packed.inputWordIds, [1, length]),
    input_mask: new Tensor(packed.inputMask, [1, length]),
    input_type_ids: new Tensor(packed.inputTypeIds, [1, length]),
  };
  let outputs;
  try {
    outputs = await model.run(feed);
  } finally {
    Object.values(feed).forEach((t) => t.delete());
  }
  try {
    const arrays = {};
    for (const [name, tensor] of Object.entries(outputs)) arrays[name] = Float32Array.from(await tensor.data());
    return arrays;
  } finally {
    Object.values(outputs).forEach((t) => t.delete());
  }
}

// A sentence-pair classifier, run at its export's seq_length (the padding is
// masked).
async function loadPairClassifier(bytes, files, labels) {
  const wordPiece = wordPieceTokenizer(need(files, "vocab.txt"));
  const { model, length } = await compile(bytes);
  return {
    kind: "pair",
    runtime: "LiteRT.js",
    description: `${labels.length} labels of a pair of texts, ${length} tokens`,
    async predict(textA, textB) {
      const outputs = await run(model, packSentences(wordPiece, textA, textB, length), length);
      return ranked(Array.from(outputs.probabilities, (score, id) => ({ label: labels[id], score, id })));
    },
  };
}

// log(p), kept finite where p underflowed to 0 (the in-graph decoder takes a
// log-softmax of logits, which never is -Infinity).
const logProb = (p) => Math.log(Math.max(p, 1e-45));

// The one intent of a slot tagger: the own-data job trains data without
// intents (CoNLL files, doccano's sequence labelling) as intent and slots of
// this intent alone (the package's `examples.NO_INTENT`).
const NO_INTENT = "none";

/** Whether an intent and slot model's intents are a slot tagger's. */
export const isSlotTagger = (intents) => intents.length === 1 && intents[0] === NO_INTENT;

/**
 * An intent and slot model (model_builtin.tflite of an intent and slot
 * export) run by LiteRT.js on the ids of the JS WordPiece tokenizer; tags are
 * read at each word's first piece and decoded as valid IOB sequences.
 * predict(text) -> {intent, score, top, words: [{text, start, end, tag,
 * score}], spans: [{type, start, end, score}]}: a word's score is the
 * probability of its decoded tag (1 over the tags for a word cut off, which
 * the model did not read), a span's the lowest of its words', as
 * mixvocab-predict scores them. `tagger`: a slot tagger's model, whose
 * intent (`none`, always 1) says nothing.
 */
export async function loadIntentSlot(url) {
  const bytes = await fetchBytes(url);
  const files = associatedFiles(bytes);
  const intents = need(files, "intents.txt");
  const tags = need(files, "slot_tags.txt");
  const wordPiece = wordPieceTokenizer(need(files, "vocab.txt"));
  const constraint = allowedTransitions(tags);
  const { model, length } = await compile(bytes);
  const tagger = isSlotTagger(intents);
  return {
    kind: "intent_slot",
    tagger,
    runtime: "LiteRT.js",
    description: tagger
      ? `a slot tagger, ${tags.length} slot tags, ${length} tokens`
      : `${intents.length} intents, ${tags.length} slot tags, ${length} tokens`,
    async predict(text) {
      const packed = packWords(wordPiece, text, length);
      const outputs = await run(model, packed, length);
      const intentProbs = outputs.intent_probs;
      const slotProbs = outputs.slot_probs;
      const numTags = tags.length;
      // Log-probabilities at the first piece of each word that has one; the
      // words after the cut are 'O'.
      const kept = packed.words.filter((w) => w.position >= 0);
      const scores = kept.map((w) =>
        Array.from(slotProbs.subarray(w.position * numTags, (w.position + 1) * numTags), logProb),
      );
      const best = viterbi(scores, constraint);
      const words = packed.words.map((w, i) => ({
        text: w.text,
        start: w.start,
        end: w.end,
        tag: i < best.length ? tags[best[i]] : "O",
        score: i < best.length ? Math.exp(scores[i][best[i]]) : 1 / numTags,
      }));
      const { top } = ranked(Array.from(intentProbs, (score, id) => ({ label: intents[id], score, id })));
      const spans = iobSpans(words.map((w) => w.tag)).map((span) => ({
        ...span,
        score: Math.min(...words.slice(span.start, span.end).map((w) => w.score)),
      }));
      return { intent: top[0].label, score: top[0].score, top, words, spans };
    },
  };
}
