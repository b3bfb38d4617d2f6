"""``contextual-mt testset import --format ctxpro``: the evaluation sets of ctxpro (Wicks and Post,
WMT 2023: OpenSubtitles, gender, formality, auxiliary, inflection and animacy) as the project's
suites, scored as ctxpro scores them.

An evaluation set is a JSON list of examples (``src segment``, ``ref segment``, ``expected``,
``rule``, ``document id``, ``segment id``, ...); its inputs file has one line per example, the
preceding context sentences and the current one joined by ``<eos>``. The import writes, in
``--output-dir``:

- ``source.SRC`` and ``docids``: one document per example (its context sentences, then the
  current one), for ``translate`` with context; ``examples.SRC`` (one line per example, the
  context and the sentence joined by a space, as ctxpro's systems were given it) and
  ``examples.TGT`` (the reference segments);
- ``manifest.jsonl``: one group per example for ``testset evaluate``: the current line, the
  example's number, the phenomenon (gender and animacy: pronouns; auxiliary and inflection:
  ellipsis), ctxpro's category and rule, the expected form and its alternatives (the forms of
  the set's other rules of the same case that differ in formality, or in gender at the same
  number; for animacy he/she, him/her), ``"match": "ctxpro"``;
- ``voita.json``: the reference segment and its contrastive variants (the expected form
  swapped for each alternative, ContraPro's way: only the pronoun changes), with the source
  context, for ``contrastive --format voita``; skipped occurrences are counted by reason;
- ``summary.json``: counts per phenomenon and rule, the inputs' hashes.

ctxpro's scorer (``ctxpro score``) takes the last sentence of a translation (the Moses-style
splitter of the ``sentence-splitter`` package, in the target language), lower-cases it, deletes
ASCII punctuation, and passes the example when the expected form, lower-cased, stands between
spaces in it. ``CtxproMatcher`` applies that rule (``testset evaluate`` on groups whose
``match`` is ``ctxpro``): an expected form holding punctuation (French ``t'``) can therefore never
pass, as in ctxpro, and is counted in the summary (``never_matched``).
"""

from __future__ import annotations

import json
import os
import re
import string
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from commandkit.options import option
from commandkit.outputs import atomic_write_lines, atomic_write_text, outputs
from commandkit.text import check_input_file, file_sha256, read_lines, read_text
from contextual_mt.errors import Code, InputError, check_number
from contextual_mt.testsets.build import SEPARATOR
from contextual_mt.testsets.suite_files import FILES_KEY, check_unchanged, hashes

FORMAT = "ctxpro"
IMPORT_FORMATS = (FORMAT,)  # the published suites `testset import` reads
EOS = "<eos>"
# ctxpro's categories and the phenomenon each tests, in the names of the project's suites
CATEGORIES = {
    "gender": "pronouns",
    "animacy": "pronouns",
    "formality": "formality",
    "auxiliary": "ellipsis",
    "inflection": "ellipsis",
}
# the released files: [mini.]CATEGORY.opensubtitles.SRC-TGT.SPLIT[.json]
FILE_NAME = re.compile(r"^(?:mini\.)?(?P<category>[a-z]+)\.[a-z]+\.(?P<src>[a-z]{2})-(?P<tgt>[a-z]{2})\.")
# animacy (into English): "it" against the animate pronouns of the same case
ANIMACY = {"NOM": ("he", "she"), "ACC": ("him", "her"), "DAT": ("him", "her")}
GENDERS, NUMBERS = {"MASC", "FEM", "NEUT"}, {"SING", "PLUR"}
# forms the sets' rules leave out: French "vous" is also the polite form of the stressed "toi"
# (avec vous / avec toi), which ctxpro counts under its ACC rule; (language, category, case) -> form -> more
MORE_ALTERNATIVES = {
    ("fr", "formality", "DISJ"): {"toi": ("vous",)},
    ("fr", "formality", "ACC"): {"vous": ("toi",)},
}
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_VOWEL = re.compile(r"[aeiouyhàâäéèêëîïôöùûüœæ]", re.IGNORECASE)
REQUIRED = ("src segment", "ref segment", "expected", "rule", "document id", "segment id")


@dataclass(frozen=True)
class ImportOptions:
    """The inputs of ``import_ctxpro`` (the options of ``contextual-mt testset import``); give
    them as keywords (``format``, the command line's first option, may be left out)."""

    # the suite's format: ctxpro's, the one there is (None: it)
    format: Optional[str] = option(
        choices=IMPORT_FORMATS, required=True, help="the suite's format: ctxpro (Wicks and Post, 2023)"
    )
    evalset: str = option(  # ctxpro's JSON evaluation set
        required=True,
        metavar="JSON",
        help="ctxpro's evaluation set (e.g. release/evalsets/formality.opensubtitles.en-fr.dev.json)",
    )
    inputs: str = option(  # its inputs: one line per example, context and sentence joined by <eos>
        required=True,
        help="its inputs: one line per example, the context sentences and the sentence joined by <eos> "
        "(ctxpro's release/inputs/ file of the same name)",
    )
    output_dir: str = option(
        required=True,
        help="folder for source.SRC and docids (one document per example, for translate), examples.SRC/TGT, "
        "manifest.jsonl (testset evaluate), voita.json (contrastive) and summary.json",
    )
    lang: Optional[str] = option(help="target language (default: from the file name, e.g. en-fr: fr)")
    source_lang: Optional[str] = option(help="source language (default: from the file name, else en)")
    category: Optional[str] = option(help="ctxpro's category: gender, formality, ... (default: from the file name)")
    context_size: Optional[int] = option(  # None: all of them
        help="context sentences kept before each example's sentence (default: all of ctxpro's, up to 10)"
    )

    def __post_init__(self) -> None:
        if self.format not in (None, *IMPORT_FORMATS):
            raise InputError(
                f"--format: one of {', '.join(IMPORT_FORMATS)} (got {self.format!r})", code=Code.OPTION_VALUE
            )
        for flag, path in (("--evalset", self.evalset), ("--inputs", self.inputs), ("--output-dir", self.output_dir)):
            if not isinstance(path, str) or not path:
                raise InputError(f"{flag}: a path is required (got {path!r})", code=Code.OPTION_MISSING)
        named = FILE_NAME.match(os.path.basename(self.evalset))
        for flag, value, key in (("--lang", self.lang, "tgt"), ("--source-lang", self.source_lang, "src")):
            if value is not None and not re.fullmatch(r"[a-z]{2,3}", value):
                raise InputError(f"{flag}: a language code such as fr (got {value!r})", code=Code.OPTION_VALUE)
            if value is not None and named and named.group(key) != value:
                raise InputError(
                    f"{flag} {value}: {self.evalset} is named for {named.group('src')}-{named.group('tgt')}; "
                    "give the evaluation set of that pair",
                    code=Code.MISMATCH,
                )
        if self.category is not None and self.category not in CATEGORIES:
            raise InputError(
                f"--category: one of {', '.join(CATEGORIES)} (got {self.category!r})", code=Code.OPTION_VALUE
            )
        if self.category is not None and named and named.group("category") != self.category:
            raise InputError(
                f"--category {self.category}: {self.evalset} is named for {named.group('category')}", code=Code.MISMATCH
            )
        if named and named.group("category") not in CATEGORIES:
            raise InputError(
                f"{self.evalset}: category {named.group('category')!r} is not one of ctxpro's "
                f"({', '.join(CATEGORIES)}); give --category",
                code=Code.OPTION_MISSING,
            )
        defaults = {
            "lang": named.group("tgt") if named else None,
            "source_lang": named.group("src") if named else "en",
            "category": named.group("category") if named else None,
        }
        for key, value in defaults.items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, value)
        if self.lang is None or self.category is None:
            raise InputError(
                f"{self.evalset}: not named as ctxpro's sets (CATEGORY.opensubtitles.SRC-TGT.SPLIT.json); "
                "give --lang and --category",
                code=Code.OPTION_MISSING,
            )
        if self.context_size is not None:
            check_number("--context-size", self.context_size, minimum=0, integer=True)
        real = {os.path.realpath(p) for p in (self.evalset, self.inputs)}
        if any(os.path.realpath(p) in real for p in self.output_paths()):
            raise InputError(
                f"--output-dir {self.output_dir}: would overwrite an input; choose another folder",
                code=Code.OUTPUT_IS_INPUT,
            )

    @property
    def target(self) -> str:
        return str(self.lang)

    @property
    def source(self) -> str:
        return str(self.source_lang)

    @property
    def phenomenon(self) -> str:
        return CATEGORIES[str(self.category)]

    def output_paths(self) -> List[str]:
        names = [f"source.{self.source}", "docids", f"examples.{self.source}", f"examples.{self.target}"]
        names += ["manifest.jsonl", "voita.json", "summary.json"]
        return [os.path.join(self.output_dir, n) for n in names]


# ----------------------------------------------------------------------------- ctxpro's rule
class CtxproMatcher:
    """ctxpro's test: the expected form, lower-cased, between spaces in the translation's last
    sentence (``sentence-splitter``'s, in the target language), lower-cased and stripped of ASCII
    punctuation (deleted, not replaced by a space)."""

    def __init__(self, language: str) -> None:
        try:
            from sentence_splitter import SentenceSplitter, SentenceSplitterException
        except ImportError:
            raise InputError(
                "ctxpro's suites are scored with ctxpro's sentence splitter; install it "
                "(pip install sentence-splitter)",
                code=Code.MODEL,
            ) from None
        code = re.split(r"[-_]", language, maxsplit=1)[0].lower()
        try:
            self.splitter = SentenceSplitter(language=code)
        except SentenceSplitterException:
            raise InputError(
                f"language {language!r}: ctxpro's sentence splitter (sentence-splitter) has no rules for it",
                code=Code.MODEL,
            ) from None

    def last_sentence(self, text: str) -> str:
        text = text.strip()
        sentences = self.splitter.split(text=text)
        return sentences[-1] if sentences else text

    def prepare(self, translation: str) -> str:
        """What the forms are looked for in: " last sentence, lower-cased, without punctuation "."""
        return " " + self.last_sentence(translation).lower().translate(_PUNCTUATION) + " "

    @staticmethod
    def found(prepared: str, form: str) -> bool:
        return f" {form.lower()} " in prepared


def never_matched(form: str) -> bool:
    """ctxpro deletes ASCII punctuation from the translation but not from the form: a form that
    holds any (t', -Fühlst) or a space at its ends is never found."""
    return any(c in string.punctuation for c in form) or form != form.strip() or not form


# ----------------------------------------------------------------------------- reading
def read_evalset(path: str) -> List[Dict[str, Any]]:
    """The examples of a ctxpro evaluation set; one error naming the file and the example."""
    check_input_file(path, "ctxpro evaluation set")
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path}:{e.lineno}: not JSON ({e.msg}); expected ctxpro's evaluation set", code=Code.FORMAT
        ) from None
    if not isinstance(data, list) or not data:
        raise InputError(
            f"{path}: expected a non-empty JSON list of examples (ctxpro's evaluation set)", code=Code.FORMAT
        )
    for n, example in enumerate(data, start=1):
        where = f"{path}: example {n}"
        if not isinstance(example, dict):
            raise InputError(f"{where}: not a JSON object", code=Code.FORMAT)
        missing = [k for k in REQUIRED if k not in example]
        if missing:
            raise InputError(
                f"{where}: not a ctxpro example (no {', '.join(repr(k) for k in missing)})", code=Code.FORMAT
            )
        for key in ("src segment", "ref segment", "expected", "rule"):
            if not isinstance(example[key], str) or not example[key].strip():
                raise InputError(
                    f"{where}: {key!r} must be a non-empty string (got {example[key]!r})", code=Code.FORMAT
                )
            if "\n" in example[key] or "\r" in example[key]:
                raise InputError(f"{where}: {key!r} holds a line break", code=Code.FORMAT)
        if not isinstance(example["document id"], (str, int)) or isinstance(example["document id"], bool):
            raise InputError(
                f"{where}: 'document id' must be a string (got {example['document id']!r})", code=Code.FORMAT
            )
        distance = example.get("ante distance")
        if distance is not None and (isinstance(distance, bool) or not isinstance(distance, int)):
            raise InputError(f"{where}: 'ante distance' must be a whole number (got {distance!r})", code=Code.FORMAT)
    return data


def read_inputs(path: str, examples: Sequence[Dict[str, Any]], evalset: str) -> List[Tuple[List[str], str]]:
    """Each example's (context sentences, current sentence), from ctxpro's inputs file: one line
    per example whose last <eos> part is the example's source segment."""
    lines = read_lines(path)
    if len(lines) != len(examples):
        raise InputError(
            f"{path}: has {len(lines)} lines but {evalset} has {len(examples)} examples; "
            "give the inputs of this evaluation set (ctxpro's inputs/ file of the same name)",
            code=Code.LINE_COUNT,
        )
    read = []
    for n, (line, example) in enumerate(zip(lines, examples, strict=True), start=1):
        parts = [p.strip() for p in line.split(EOS)]
        if any(not p for p in parts):
            raise InputError(f"{path}:{n}: an empty sentence between {EOS} separators", code=Code.EMPTY)
        if parts[-1] != example["src segment"].strip():
            raise InputError(
                f"{path}:{n}: its last sentence is not the source segment of example {n} of {evalset} "
                f"({parts[-1][:60]!r} vs {example['src segment'][:60]!r}); give the inputs of this evaluation set",
                code=Code.MISMATCH,
            )
        read.append((parts[:-1], parts[-1]))
    return read


# ----------------------------------------------------------------------------- alternatives
def _rule_parts(rule: str) -> Tuple[str, frozenset]:
    """The case and the features of a rule: ACC.FORM+PLUR -> ("ACC", {FORM, PLUR})."""
    case, *rest = rule.split(".")
    return case, frozenset(t for part in rest for t in part.split("+"))


def _formality(features: frozenset) -> Optional[str]:
    formal, informal = "FORM" in features, "INFORM" in features
    return None if formal == informal else "formal" if formal else "informal"


def alternatives_by_rule(lang: str, category: str, examples: Sequence[Dict[str, Any]]) -> Dict[str, List[str]]:
    """For each rule, the forms that would be wrong in its place: the expected forms of the set's
    rules of the same case that differ in formality (formality) or in gender at the same number
    (gender), and MORE_ALTERNATIVES; he/she, him/her for animacy's "it"; none for auxiliary and
    inflection (open forms)."""
    forms: Dict[str, set] = defaultdict(set)
    for example in examples:
        forms[example["rule"]].add(example["expected"].lower())
    result: Dict[str, List[str]] = {}
    for rule, own in forms.items():
        case, features = _rule_parts(rule)
        alternatives: set = set()
        if category == "animacy":
            alternatives = set(ANIMACY.get(case, ()))
        for form in own:
            alternatives |= set(MORE_ALTERNATIVES.get((lang, category, case), {}).get(form, ()))
        for other, theirs in forms.items():
            o_case, o_features = _rule_parts(other)
            if other == rule or o_case != case:
                continue
            if category == "formality":
                mine, its = _formality(features), _formality(o_features)
                if mine and its and mine != its:
                    alternatives |= theirs
            elif (
                category == "gender"
                and (features & NUMBERS) == (o_features & NUMBERS)
                and (features & GENDERS) != (o_features & GENDERS)
            ):
                alternatives |= theirs
        result[rule] = sorted(alternatives - own)
    return result


# ----------------------------------------------------------------------------- contrastive variants
def _word(form: str) -> re.Pattern:
    """The form as a word of the reference (any apostrophe; not inside a hyphenated word)."""
    body = re.escape(form).replace("'", "['\u2019]")
    end = "" if form.endswith("'") else r"(?![\w\-])"
    return re.compile(r"(?<![\w'\u2019\-])" + body + end, re.IGNORECASE)


def _cased(alternative: str, found: str, lang: str, formal: bool) -> str:
    if found[:1].isupper() or (lang == "de" and formal):  # German polite forms are capitalised (Sie, Ihnen)
        return alternative[:1].upper() + alternative[1:]
    return alternative


def variants(
    example: Dict[str, Any],
    category: str,
    alternatives: Sequence[str],
    lang: str,
    formal_forms: frozenset,
    all_forms: frozenset = frozenset(),
) -> Tuple[List[Dict[str, str]], Optional[str]]:
    """The reference segment with the expected form swapped for each alternative, or the reason
    why none is made. Only the pronoun changes (ContraPro's way); a formal subject is not swapped,
    its verb agreeing with it, nor one whose sentence holds another of the set's forms (``all_forms``:
    the variant would mix T and V); a formality form whose alternative depends on the role or the number
    (French vous: te or toi; German Sie: dich or euch) is not swapped either."""
    if not alternatives:
        return [], "no alternative form known from the rule"
    case, _ = _rule_parts(example["rule"])
    if category == "formality" and case.startswith("NOM"):
        return [], "a subject (its verb agrees)"
    reference, form = example["ref segment"], example["expected"]
    hits = list(_word(form).finditer(reference))
    if len(hits) != 1:
        return [], "the form is not a word of the reference" if not hits else "the form occurs twice or more"
    hit = hits[0]
    if category == "formality" and any(m.span() != hit.span() for f in all_forms for m in _word(f).finditer(reference)):
        return [], "another form of address in the sentence"
    before, after = reference[: hit.start()], reference[hit.end() :]
    vowel = bool(_VOWEL.match(after.lstrip()[:1] or "x"))
    made: List[Dict[str, str]] = []
    for alternative in alternatives:
        elided = alternative.endswith("'")
        if elided and not vowel:
            continue  # t' only before a vowel
        if not elided and vowel and any(a.endswith("'") and a[:-1] == alternative[:-1] for a in alternatives):
            continue  # te has its elided form before a vowel
        word = _cased(alternative, hit.group(0), lang, alternative in formal_forms)
        if elided:
            text = before + word + after.lstrip()
        elif hit.group(0).endswith(("'", "\u2019")):
            text = before + word + " " + after  # t'aime -> vous aime
        else:
            text = before + word + after
        if text != reference:
            made.append({"text": text, "alternative": alternative, "reason": f"{form} -> {alternative}"})
    if category == "formality" and len(made) > 1:
        return [], "the alternative depends on the role or the number"
    return made, None if made else "no alternative fits (elision)"


# ----------------------------------------------------------------------------- the import
def import_ctxpro(options: ImportOptions) -> Dict[str, Any]:
    """Read the evaluation set and its inputs, write the suite (all files or none)."""
    examples = read_evalset(options.evalset)
    contexts = read_inputs(options.inputs, examples, options.evalset)
    with outputs(*options.output_paths(), directories=[options.output_dir]):
        return _write(options, examples, contexts)


def _write(options: ImportOptions, examples, contexts) -> Dict[str, Any]:
    category = str(options.category)
    by_rule = alternatives_by_rule(options.target, category, examples)
    formal_forms = frozenset(
        e["expected"].lower() for e in examples if _formality(_rule_parts(e["rule"])[1]) == "formal"
    )
    all_forms = frozenset({e["expected"].lower() for e in examples} | {a for alts in by_rule.values() for a in alts})
    source, docids, joined, references, manifest, voita = [], [], [], [], [], []
    counts: Dict[str, Counter] = defaultdict(Counter)
    rules: Dict[str, Counter] = defaultdict(Counter)
    unmatched = 0
    for k, (example, (context, current)) in enumerate(zip(examples, contexts, strict=True)):
        if options.context_size is not None:
            context = context[len(context) - options.context_size :] if options.context_size else []
        docid = f"ctxpro-{k + 1}"
        source += [*context, current]
        docids += [docid] * (len(context) + 1)
        joined.append(" ".join([*context, current]))
        references.append(example["ref segment"].strip())
        distance = example.get("ante distance")
        made, skipped = variants(example, category, by_rule[example["rule"]], options.target, formal_forms, all_forms)
        group = {
            "group": k,
            "line": len(source),
            "example": k + 1,
            "doc": docid,
            "sentence": len(context),
            "phenomenon": options.phenomenon,
            "category": category,
            "rule": example["rule"],
            "word": example["expected"],
            "alternatives": by_rule[example["rule"]],
            "distance": distance if distance is not None and distance >= 0 else None,
            "match": FORMAT,
            "source_document": str(example["document id"]),
            "segment": example["segment id"],
            "variants": made,
        }
        manifest.append(json.dumps(group, ensure_ascii=False))
        counts[options.phenomenon]["groups"] += 1
        rules[example["rule"]]["groups"] += 1
        if never_matched(example["expected"]):
            unmatched += 1
            rules[example["rule"]]["never matched"] += 1
        if made:
            counts[options.phenomenon]["contrastive groups"] += 1
            order = [references[-1]] + [v["text"] for v in made]
            entry = {
                "src": SEPARATOR.join([*context, current]),
                "dst": order,
                "true_ind": 0,
                "phenomenon": options.phenomenon,
                "rule": example["rule"],
                "line": group["line"],
            }
            if group["distance"] is not None:
                entry["ctx_dist"] = group["distance"]
            voita.append(entry)
        else:
            counts[options.phenomenon][f"no contrastive variant: {skipped}"] += 1
    d = options.output_dir
    atomic_write_lines(os.path.join(d, f"source.{options.source}"), source)
    atomic_write_lines(os.path.join(d, "docids"), docids)
    atomic_write_lines(os.path.join(d, f"examples.{options.source}"), joined)
    atomic_write_lines(os.path.join(d, f"examples.{options.target}"), references)
    atomic_write_lines(os.path.join(d, "manifest.jsonl"), manifest)
    atomic_write_text(os.path.join(d, "voita.json"), json.dumps(voita, ensure_ascii=False, indent=1) + "\n")
    # the suite's own files, by content: a suite edited after its import is refused (read_suite);
    # file_sha256 reads the staged files, what the transaction will put in place
    files = hashes(d, [os.path.basename(p) for p in options.output_paths() if not p.endswith("summary.json")])
    summary = {
        "format": FORMAT,
        "language": options.target,
        "source_language": options.source,
        "category": category,
        "evalset": options.evalset,
        "evalset_sha256": file_sha256(options.evalset),
        "inputs": options.inputs,
        "inputs_sha256": file_sha256(options.inputs),
        "reference": os.path.join(d, f"examples.{options.target}"),
        "lines": len(source),
        "examples": len(examples),
        "groups": len(examples),
        "contrastive_groups": len(voita),
        "context_size": options.context_size,
        "never_matched": unmatched,
        "phenomena": {p: dict(sorted(c.items())) for p, c in counts.items()},
        "rules": {
            rule: {
                "expected": sorted({e["expected"] for e in examples if e["rule"] == rule}),
                "alternatives": by_rule[rule],
                **dict(c),
            }
            for rule, c in rules.items()
        },
        FILES_KEY: files,
    }
    atomic_write_text(os.path.join(d, "summary.json"), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def read_suite(folder: str, given: Optional[str] = None) -> Dict[str, Any]:
    """The summary of a suite ``testset import`` wrote in ``folder``, once every file it wrote is
    checked to be still the one it wrote (one line naming the file, or the option as ``given``:
    ``--suite DIR``, ``SUITE=DIR``, otherwise)."""
    given = given or f"--suite {folder}"
    if not os.path.isdir(folder):
        raise InputError(
            f"{given}: not a folder; give one written by 'contextual-mt testset import --format ctxpro'",
            code=Code.NOT_FOUND,
        )
    path = os.path.join(folder, "summary.json")
    if not os.path.isfile(path):
        raise InputError(
            f"{given}: no summary.json; not a suite written by 'contextual-mt testset import --format ctxpro'",
            code=Code.NOT_FOUND,
        )
    try:
        summary = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: not JSON ({e.msg}); import the suite again", code=Code.FORMAT) from None
    if not isinstance(summary, dict) or summary.get("format") != FORMAT:
        raise InputError(
            f'{path}: not the summary of an imported ctxpro suite (no "format": "{FORMAT}")', code=Code.FORMAT
        )
    files = summary.get(FILES_KEY)
    if not isinstance(files, dict) or not files:
        raise InputError(
            f"{path}: names no hashes of the suite's files (imported by an earlier version); import the suite again",
            code=Code.MISMATCH,
        )
    for name in files:
        file = os.path.join(folder, str(name))
        if not os.path.isfile(file):
            raise InputError(
                f"{file}: not found; the suite {folder} is incomplete, import it again", code=Code.NOT_FOUND
            )
    check_unchanged(path, summary)
    for key in ("language", "source_language", "category", "examples", "contrastive_groups"):
        if key not in summary:
            raise InputError(f"{path}: no {key!r}; import the suite again", code=Code.FORMAT)
    return summary


def summary_lines(summary: Dict[str, Any]) -> List[str]:
    lines = [
        f"{summary['examples']} examples of ctxpro's {summary['category']} set ({summary['source_language']}-"
        f"{summary['language']}, {summary['lines']} lines with their context), "
        f"{summary['contrastive_groups']} with contrastive variants"
    ]
    for p, c in summary["phenomena"].items():
        skipped = "; ".join(f"{k[len('no contrastive variant: ') :]} {v}" for k, v in c.items() if k.startswith("no "))
        lines.append(
            f"  {p}: {c.get('groups', 0)} groups" + (f"; no contrastive variant: {skipped}" if skipped else "")
        )
    if summary["never_matched"]:
        lines.append(
            f"  {summary['never_matched']} expected forms hold punctuation: ctxpro's rule never finds them "
            "(it deletes punctuation from the translation only); testset evaluate scores them as ctxpro does"
        )
    return lines


__all__ = ["CtxproMatcher", "ImportOptions", "import_ctxpro", "read_evalset", "read_suite", "summary_lines"]
