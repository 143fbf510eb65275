// Slot tags decoded as valid IOB sequences: the constrained Viterbi of
// mixvocab_tf/tasks/finetuning/iob_decoding.py (allowed_transitions,
// viterbi_decode_numpy), ties to the lowest tag id as there.

/** Score of a forbidden transition (iob_decoding.FORBIDDEN). */
export const FORBIDDEN = -1e4;

function split(tag) {
  const prefix = tag.slice(0, 2);
  return prefix === "B-" || prefix === "I-" ? [tag[0], tag.slice(2)] : ["O", ""];
}

/** {start: [S], transitions: [S][S]}: 0 where allowed, FORBIDDEN where not.
 * A sequence may not start with I-x; I-x may only follow B-x or I-x. */
export function allowedTransitions(tags) {
  const parts = tags.map(split);
  const start = parts.map(() => 0);
  const transitions = parts.map(() => parts.map(() => 0));
  parts.forEach(([prefix, kind], j) => {
    if (prefix !== "I") return;
    start[j] = FORBIDDEN;
    parts.forEach(([prevPrefix, prevKind], i) => {
      if (prevPrefix === "O" || prevKind !== kind) transitions[i][j] = FORBIDDEN;
    });
  });
  return { start, transitions };
}

function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** The best allowed tag ids of a sequence of per-word score rows
 * (log-probabilities), as viterbi_decode_numpy gives them. */
export function viterbi(scores, { start, transitions }) {
  if (scores.length === 0) return [];
  const size = start.length;
  let best = start.map((s, j) => s + scores[0][j]);
  const pointers = [];
  for (let t = 1; t < scores.length; t++) {
    const next = new Array(size);
    const pointer = new Array(size);
    for (let j = 0; j < size; j++) {
      let from = 0;
      let value = best[0] + transitions[0][j];
      for (let i = 1; i < size; i++) {
        const candidate = best[i] + transitions[i][j];
        if (candidate > value) {
          value = candidate;
          from = i;
        }
      }
      next[j] = value + scores[t][j];
      pointer[j] = from;
    }
    pointers.push(pointer);
    best = next;
  }
  const tags = [argmax(best)];
  for (let t = pointers.length - 1; t >= 0; t--) tags.push(pointers[t][tags[tags.length - 1]]);
  return tags.reverse();
}

/** Slot spans of word-level tags: [{type, start, end}] (end exclusive), as
 * mixvocab_tf.serving.predictor.iob_to_spans reads them (conlleval chunks). */
export function iobSpans(tags) {
  const spans = [];
  let open = null;
  tags.forEach((tag, i) => {
    const [prefix, kind] = split(tag);
    if (prefix === "O") {
      open = null;
    } else if (prefix === "B" || !open || open.type !== kind) {
      open = { type: kind, start: i, end: i + 1 };
      spans.push(open);
    } else {
      open.end = i + 1;
    }
  });
  return spans;
}
