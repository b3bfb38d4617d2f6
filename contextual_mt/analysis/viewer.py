"""A self-contained HTML page (no network, no server) to browse P-CXMI.

Documents are shown sentence by sentence with tokens shaded by P-CXMI (red: context helps,
blue: context hurts) and the model's context beside each sentence. A token list can be
filtered by POS class, tag, value and text, and sorted; clicking a token opens its document.
The page opens on the document of the highest-P-CXMI token, which is outlined (id="top-token").

With attribution records (``contextual-mt attribute``), the context column shows the model's
context word by word (source and target side; words grouped from subwords by ``split_words``),
the context-sensitive words (CTI) are underlined, and clicking one shades its cues (CCI) in the
context by score (the score on hover). A cue word's score is the highest over its subwords and
over the selected subwords of the clicked word.
"""

from __future__ import annotations

import html
import json
from typing import Dict, List, Optional, Sequence

import numpy as np

from commandkit.outputs import atomic_write_text
from contextual_mt.analysis.join import SentenceRecord, context_words, cue_words

_CSS = """
body{font-family:system-ui,sans-serif;margin:0;color:#222}
header{padding:10px 16px;background:#f4f4f4;border-bottom:1px solid #ddd}
header h1{font-size:18px;margin:0 0 4px}
.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin-top:6px;font-size:13px}
main{display:flex;height:calc(100vh - 110px)}
#list{width:36%;overflow:auto;border-right:1px solid #ddd;font-size:13px}
#list table{border-collapse:collapse;width:100%}
#list td,#list th{padding:3px 6px;border-bottom:1px solid #eee;text-align:left}
#list tr.row{cursor:pointer} #list tr.row:hover{background:#fff6d5}
#doc{flex:1;overflow:auto;padding:8px 16px}
.sent{display:flex;gap:16px;padding:6px 0;border-bottom:1px solid #eee}
.ctx{width:38%;color:#777;font-size:12px}
.ctx div{margin-bottom:2px}
.cur{flex:1} .src{color:#555;font-size:12px;margin-top:2px}
.tok{padding:1px 2px;margin:0 1px;border-radius:3px;display:inline-block}
.tok.match{outline:1px dashed #333}
#top-token,.tok.focus{outline:3px solid #f1c40f}
.num{font-variant-numeric:tabular-nums;text-align:right}
.legend span{padding:1px 6px;border-radius:3px;margin-right:4px}
.tok.cs{text-decoration:underline 2px #1e8449;text-underline-offset:3px;cursor:pointer}
.tok.cs.active{outline:2px solid #1e8449}
.ctok{padding:0 1px;border-radius:3px}
.ctx .side{color:#999;margin-right:3px}
"""

_JS = r"""(() => {
const D = JSON.parse(document.getElementById('pcxmi-data').textContent);
const S = D.sentences, docs = [], docIndex = {};
S.forEach((s, i) => { if (!(s.d in docIndex)) { docIndex[s.d] = docs.length; docs.push([]); } docs[docIndex[s.d]].push(i); });
const byLine = {}; S.forEach((s, i) => byLine[s.l] = i);
function shade(v) {
  const a = Math.min(1, Math.abs(v) / D.scale) * 0.85;
  return v >= 0 ? `rgba(192,57,43,${a})` : `rgba(46,134,193,${a})`;
}
function tip(u) { return `P-CXMI ${u[1].toFixed(4)} ${D.unit}` + (u[3].length ? ` · ${u[3].join(' ')}` : '') + (u[4].length ? ` · tags: ${u[4].join(', ')}` : ''); }
const el = (tag, attrs, text) => { const e = document.createElement(tag); Object.assign(e, attrs || {}); if (text !== undefined) e.textContent = text; return e; };
const F = {pos: '', tag: '', min: null, text: '', sort: 'desc', cs: false};
function isCs(s, t) { return !!(s.a && s.a.s[t]); }
function cueShade(v) { return `rgba(30,132,73,${(Math.min(1, Math.abs(v) / D.cueScale) * 0.8).toFixed(3)})`; }
function clearCues() {
  document.querySelectorAll('.ctok.cue').forEach(e => { e.classList.remove('cue'); e.style.background = ''; e.title = ''; });
  document.querySelectorAll('.tok.cs.active').forEach(e => e.classList.remove('active'));
}
function showCues(s, t, span) {
  const on = span.classList.contains('active');
  clearCues();
  if (on) return;
  span.classList.add('active');
  for (const [c, w, v] of s.a.s[t]) {
    const e = document.getElementById(`cx-${s.l}-${c}-${w}`);
    if (!e) continue;
    e.classList.add('cue'); e.style.background = cueShade(v);
    e.title = `cue of “${s.u[t][0]}”: score ${v.toFixed(4)}`;
  }
}
function attributionContext(s, ctx) {
  s.a.x.forEach(([side, k, words], c) => {
    const line = el('div', {});
    line.appendChild(el('span', {className: 'side'}, `↑${-k} ${side === 'source' ? 'src' : 'tgt'}:`));
    words.forEach((w, j) => { line.appendChild(el('span', {className: 'ctok', id: `cx-${s.l}-${c}-${j}`}, w)); line.appendChild(document.createTextNode(' ')); });
    ctx.appendChild(line);
  });
}
function matches(u, s, t) {
  if (F.cs && !isCs(s, t)) return false;
  if (F.pos && !u[3].includes(F.pos)) return false;
  if (F.tag === '(no tag)' ? u[4].length : (F.tag && !u[4].includes(F.tag))) return false;
  if (F.min !== null && u[1] < F.min) return false;
  if (F.text && !u[0].toLowerCase().includes(F.text)) return false;
  return true;
}
let current = -1, focus = null;
function renderDoc(d, focusLine, focusTok) {
  current = d;
  const box = document.getElementById('doc'); box.replaceChildren();
  document.getElementById('docname').textContent = `document ${docs[d].length ? S[docs[d][0]].d : ''} (${d + 1} of ${docs.length})`;
  let target = null;
  for (const i of docs[d]) {
    const s = S[i], row = el('div', {className: 'sent', id: 'line-' + s.l});
    const ctx = el('div', {className: 'ctx'});
    ctx.appendChild(el('div', {}, `line ${s.l} · context: ${s.c[1]} target, ${s.c[0]} source`));
    if (s.a) attributionContext(s, ctx); else {
    for (let k = s.c[1]; k >= 1; k--) { const j = byLine[s.l - k]; if (j !== undefined && S[j].d === s.d) ctx.appendChild(el('div', {}, '↑' + k + ' ' + S[j].r)); }
    for (let k = s.c[0]; k >= 1; k--) { const j = byLine[s.l - k]; if (j !== undefined && S[j].d === s.d) ctx.appendChild(el('div', {}, '↑' + k + ' src: ' + S[j].src)); }
    }
    const cur = el('div', {className: 'cur'});
    s.u.forEach((u, t) => {
      const span = el('span', {className: 'tok' + (matches(u, s, t) && filtering() ? ' match' : ''), title: tip(u)}, u[0]);
      span.style.background = shade(u[1]);
      if (isCs(s, t)) {
        span.classList.add('cs');
        span.title += ` · context-sensitive: click for its ${s.a.s[t].length} cue word(s)`;
        span.onclick = () => showCues(s, t, span);
      }
      if (s.l === D.top[0] && t === D.top[1]) span.id = 'top-token';
      if (s.l === focusLine && t === focusTok) { span.classList.add('focus'); target = span; }
      cur.appendChild(span); cur.appendChild(document.createTextNode(' '));
    });
    cur.appendChild(el('div', {className: 'src'}, s.src));
    cur.appendChild(el('div', {className: 'src'}, `sentence P-CXMI ${s.p.toFixed(4)} ${D.unit}`));
    row.appendChild(ctx); row.appendChild(cur); box.appendChild(row);
  }
  if (target) target.scrollIntoView({block: 'center'});
}
function filtering() { return F.pos || F.tag || F.min !== null || F.text || F.cs; }
function renderList() {
  const hits = [];
  S.forEach((s, i) => s.u.forEach((u, t) => { if (matches(u, s, t)) hits.push([i, t]); }));
  const key = ([i, t]) => S[i].u[t][1];
  if (F.sort === 'desc') hits.sort((a, b) => key(b) - key(a) || S[a[0]].l - S[b[0]].l);
  else if (F.sort === 'asc') hits.sort((a, b) => key(a) - key(b) || S[a[0]].l - S[b[0]].l);
  document.getElementById('count').textContent = `${hits.length} words match` + (hits.length > D.listLimit ? ` (first ${D.listLimit} listed)` : '');
  const tb = document.getElementById('rows'); tb.replaceChildren();
  hits.slice(0, D.listLimit).forEach(([i, t], n) => {
    const s = S[i], u = s.u[t], tr = el('tr', {className: 'row'});
    [n + 1, u[0], u[1].toFixed(4), u[2] || '', u[4].join(', '), s.l].forEach((v, c) => tr.appendChild(el('td', {className: c === 2 || c === 0 || c === 5 ? 'num' : ''}, String(v))));
    tr.onclick = () => renderDoc(docIndex[s.d], s.l, t);
    tb.appendChild(tr);
  });
  if (current >= 0) renderDoc(current);
}
function fill(id, values) { const sel = document.getElementById(id); values.forEach(v => sel.appendChild(el('option', {value: v}, v))); }
fill('pos', D.classes); fill('tag', D.tags.length ? [...D.tags, '(no tag)'] : []);
document.getElementById('pos').onchange = e => { F.pos = e.target.value; renderList(); };
document.getElementById('tag').onchange = e => { F.tag = e.target.value; renderList(); };
document.getElementById('min').oninput = e => { F.min = e.target.value === '' ? null : parseFloat(e.target.value); renderList(); };
document.getElementById('text').oninput = e => { F.text = e.target.value.toLowerCase(); renderList(); };
const csBox = document.getElementById('cs');
if (csBox) csBox.onchange = e => { F.cs = e.target.checked; renderList(); };
document.getElementById('sort').onchange = e => { F.sort = e.target.value; renderList(); };
document.getElementById('prev').onclick = () => renderDoc(Math.max(0, current - 1));
document.getElementById('next').onclick = () => renderDoc(Math.min(docs.length - 1, current + 1));
renderList();
const topIdx = byLine[D.top[0]];
renderDoc(topIdx === undefined ? 0 : docIndex[S[topIdx].d], D.top[0], D.top[1]);
document.body.dataset.ready = '1';
})();
"""

_CS_CONTROL = (
    '<label><input id="cs" type="checkbox"> context-sensitive only</label> '
    '<span class="legend"><span style="text-decoration:underline 2px #1e8449">context-sensitive</span>'
    '<span style="background:rgba(30,132,73,.6)">its cues (click it)</span></span>\n'
)


def _sentence_attribution(s: SentenceRecord, a: Dict) -> Dict:
    """The viewer's attribution of one sentence: "x", its context sentences as (side, -k, words),
    target side first, the farthest first (as the context column has always shown them); "s", for
    each context-sensitive unit (by index), its cues as [context sentence, word, score]."""
    sentences = context_words(a)
    order = sorted(range(len(sentences)), key=lambda c: (sentences[c][0] != "target", sentences[c][1]))
    new_index = {c: n for n, c in enumerate(order)}
    cues: Dict[str, Dict] = {}
    for t in a["selected"]:  # a selected word with no cue above the rule is still marked
        if t < len(s.piece_units) and s.piece_units[t] >= 0:
            cues.setdefault(str(s.piece_units[t]), {})
    for (t, c, w), score in cue_words(a).items():
        if t < len(s.piece_units) and s.piece_units[t] >= 0:
            word_cues = cues[str(s.piece_units[t])]
            key = (new_index[c], w)
            word_cues[key] = max(word_cues.get(key, score), score)
    return {
        "x": [[sentences[c][0], sentences[c][1], [w for w, _ in sentences[c][2]]] for c in order],
        "s": {u: [[c, w, v] for (c, w), v in sorted(word_cues.items())] for u, word_cues in cues.items()},
    }


def _cue_scale(data: List[Dict]) -> float:
    scores = np.abs([v for d in data for cues in d["s"].values() for _, _, v in cues] or [0.0])
    return float(np.quantile(scores, 0.99)) or float(scores.max()) or 1.0


def viewer_html(
    sentences: Sequence[SentenceRecord],
    summary: Dict,
    list_limit: int = 500,
    attribution: Optional[Dict[int, Dict]] = None,
) -> str:
    values = np.array([u.pcxmi for s in sentences for u in s.units] or [0.0])
    scale = float(np.quantile(np.abs(values), 0.99)) or float(np.abs(values).max()) or 1.0
    top = max(((u.pcxmi, -s.line, -j) for s in sentences for j, u in enumerate(s.units)), default=(0, -1, 0))
    data = {
        "unit": summary.get("unit", "nats"),
        "scale": scale,
        "listLimit": list_limit,
        "top": [-top[1], -top[2]],
        "classes": sorted({c for s in sentences for u in s.units for c in u.classes}),
        "tags": sorted({t for s in sentences for u in s.units for t in u.tags}),
        "sentences": [
            {
                "l": s.line,
                "d": s.doc,
                "src": s.source,
                "r": s.reference,
                "p": s.sentence_pcxmi,
                "c": [s.context.get("source", 0), s.context.get("target", 0)],
                "u": [[u.form, u.pcxmi, u.upos, u.classes, u.tags] for u in s.units],
            }
            for s in sentences
        ],
    }
    if attribution is not None:  # absent otherwise: the page stays as it was without attribution
        per_sentence = [_sentence_attribution(s, attribution[s.line]) for s in sentences]
        for d, a in zip(data["sentences"], per_sentence, strict=True):
            d["a"] = a
        data["cueScale"] = _cue_scale(per_sentence)
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    cxmi = summary.get("cxmi")
    facts = (
        f"CXMI {cxmi:.4f} {data['unit']} · " if isinstance(cxmi, float) else ""
    ) + f"{len(sentences)} sentences · {sum(len(s.units) for s in sentences)} words"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>P-CXMI viewer</title><style>{_CSS}</style></head>
<body>
<header><h1>P-CXMI viewer</h1>
<div>{html.escape(facts)} · <span class="legend"><span style="background:rgba(192,57,43,.6)">context helps</span><span style="background:rgba(46,134,193,.6)">context hurts</span></span> · <span id="docname"></span>
<button id="prev">◀ previous document</button><button id="next">next document ▶</button></div>
<div class="controls">
<label>POS <select id="pos"><option value="">all</option></select></label>
<label>tag <select id="tag"><option value="">all</option></select></label>
<label>P-CXMI ≥ <input id="min" type="number" step="0.05" style="width:70px"></label>
<label>token <input id="text" type="search" style="width:100px"></label>
<label>sort <select id="sort"><option value="desc">P-CXMI, highest first</option><option value="asc">P-CXMI, lowest first</option><option value="doc">document order</option></select></label>
{_CS_CONTROL if attribution is not None else ""}<span id="count"></span>
</div></header>
<main><div id="list"><table><thead><tr><th>#</th><th>token</th><th>P-CXMI</th><th>POS</th><th>tags</th><th>line</th></tr></thead><tbody id="rows"></tbody></table></div>
<div id="doc"></div></main>
<script type="application/json" id="pcxmi-data">{payload}</script>
<script>{_JS}</script>
</body></html>
"""


def write_viewer(
    path: str, sentences: Sequence[SentenceRecord], summary: Dict, attribution: Optional[Dict[int, Dict]] = None
) -> None:
    atomic_write_text(path, viewer_html(sentences, summary, attribution=attribution))
