// The page: a model from the URL (?classifier=<path>&intent_slot=<path>,
// paths relative to the server root), a query box (two for a sentence-pair
// classifier), and the prediction.
import { loadClassifier, loadIntentSlot } from "./lib/runtimes.js";

const $ = (id) => document.getElementById(id);
const select = $("model");
const query = $("query");
const queryB = $("query-b");
const status = $("status");
const result = $("result");

const QUERY_PLACEHOLDER = query.placeholder;

const KINDS = {
  classifier: { title: "Text classifier", load: loadClassifier },
  intent_slot: { title: "Intent and slots", load: loadIntentSlot },
};

const params = new URLSearchParams(location.search);
// In the URL's order.
const choices = [...params]
  .filter(([kind, path]) => Object.hasOwn(KINDS, kind) && path)
  .map(([kind, path]) => ({ kind, path }));
const loaded = new Map();
let current = null;
let generation = 0;

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("data-")) node.dataset[key.slice(5).replace(/-(.)/g, (_, c) => c.toUpperCase())] = value;
    else if (key === "style") node.style.cssText = value;
    else node[key] = value;
  }
  node.append(...children);
  return node;
}

const percent = (p) => `${(100 * p).toFixed(1)}%`;

// A stable color per slot name.
function hue(name) {
  let h = 0;
  for (const c of name) h = (h * 31 + c.codePointAt(0)) % 360;
  return h;
}

function topList(top) {
  return element(
    "ol",
    { className: "top" },
    ...top.slice(0, 3).map((t) =>
      element(
        "li",
        {},
        element("span", { className: "bar", style: `width: ${Math.max(1, 100 * t.score)}%` }),
        element("span", { className: "bar-label", textContent: `${t.label} ${percent(t.score)}` }),
      ),
    ),
  );
}

function renderClassifier(prediction) {
  return [
    element(
      "p",
      { className: "answer" },
      "Label ",
      element("strong", {
        className: "label",
        "data-label": prediction.label,
        "data-score": String(prediction.score),
        textContent: prediction.label,
      }),
      element("span", { className: "score", textContent: percent(prediction.score) }),
    ),
    topList(prediction.top),
  ];
}

function word(w) {
  return element("span", { className: "word", "data-word": w.text, "data-tag": w.tag, title: w.tag, textContent: w.text });
}

// A slot tagger's answer is its slots: no intent line, no intent bars.
function renderIntentSlot(prediction, text, tagger) {
  const tagged = element("p", { className: "tagged" });
  const { words, spans } = prediction;
  let i = 0;
  const gap = (a, b) => text.slice(words[a].end, words[b].start);
  while (i < words.length) {
    if (i > 0) tagged.append(gap(i - 1, i));
    const span = spans.find((s) => s.start === i);
    if (!span) {
      tagged.append(word(words[i]));
      i += 1;
      continue;
    }
    const mark = element("mark", {
      className: "slot",
      "data-slot": span.type,
      "data-score": String(span.score),
      title: `${span.type}: ${percent(span.score)} sure (its least sure word)`,
      style: `--hue: ${hue(span.type)}`,
    });
    for (let j = span.start; j < span.end; j++) {
      if (j > span.start) mark.append(gap(j - 1, j));
      mark.append(word(words[j]));
    }
    mark.append(element("small", { className: "slot-name", textContent: `${span.type} ${percent(span.score)}` }));
    tagged.append(mark);
    i = span.end;
  }
  const none = spans.length ? "" : element("p", { className: "note", textContent: "No slots." });
  if (tagger) return [tagged, none];
  return [
    element(
      "p",
      { className: "answer" },
      "Intent ",
      element("strong", {
        className: "label",
        "data-intent": prediction.intent,
        "data-score": String(prediction.score),
        textContent: prediction.intent,
      }),
      element("span", { className: "score", textContent: percent(prediction.score) }),
    ),
    tagged,
    none,
    topList(prediction.top),
  ];
}

async function predict() {
  const ticket = ++generation;
  const model = current;
  if (!model) return;
  const pair = model.kind === "pair";
  const text = query.value;
  // A pair's key: both texts, a tab between them.
  const key = pair ? `${text}\t${queryB.value}` : text;
  if (!key.trim()) {
    result.replaceChildren();
    delete result.dataset.query;
    setStatus("ready", "Ready.");
    return;
  }
  setStatus("busy", "…");
  try {
    const started = performance.now();
    const prediction = pair ? await model.predict(text, queryB.value) : await model.predict(text);
    if (ticket !== generation) return; // A newer query is on its way.
    const ms = performance.now() - started;
    const nodes =
      model.kind === "intent_slot" ? renderIntentSlot(prediction, text, model.tagger) : renderClassifier(prediction);
    result.replaceChildren(...nodes);
    result.dataset.kind = model.tagger ? "slot_tagger" : model.kind;
    result.dataset.query = key;
    setStatus("ready", `${model.runtime}, ${ms.toFixed(1)} ms.`);
  } catch (error) {
    if (ticket !== generation) return;
    console.error(error);
    setStatus("error", `Prediction failed: ${error.message}`);
  }
}

let timer = null;
for (const box of [query, queryB]) {
  box.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(predict, 60);
  });
}

async function choose(index) {
  const { kind, path } = choices[index];
  const url = new URL(path, `${location.origin}/`).href;
  query.disabled = true;
  queryB.disabled = true;
  current = null;
  result.replaceChildren();
  delete result.dataset.query;
  setStatus("loading", `Loading ${path}…`);
  try {
    if (!loaded.has(url)) loaded.set(url, KINDS[kind].load(url));
    current = await loaded.get(url);
  } catch (error) {
    loaded.delete(url);
    console.error(error);
    setStatus("error", `Could not load ${path}: ${error.message}`);
    return;
  }
  $("model-info").textContent = `${current.description}; ${current.runtime}`;
  if (current.tagger) select.options[index].textContent = `Slot tagger: ${path}`;
  const pair = current.kind === "pair";
  queryB.hidden = !pair;
  query.placeholder = pair ? "First text, e.g. The cat sat on the mat." : QUERY_PLACEHOLDER;
  query.disabled = false;
  queryB.disabled = !pair;
  query.focus();
  setStatus("ready", "Ready.");
  if (query.value || queryB.value) predict();
}

if (choices.length === 0) {
  select.parentElement.hidden = true;
  $("open").open = true;
  setStatus(
    "error",
    "No model: open this page with ?classifier=<path> and/or ?intent_slot=<path> " +
      "(a model_builtin.tflite on this server), or fill in the form below.",
  );
} else {
  choices.forEach(({ kind, path }, i) => {
    select.append(element("option", { value: String(i), textContent: `${KINDS[kind].title}: ${path}` }));
    $("open").querySelector(`[name=${kind}]`).value = path;
  });
  select.addEventListener("change", () => choose(Number(select.value)));
  choose(0);
}
