"""Prompt templates for decoder-only LMs: how the previous source/target pairs and the current
source are laid out before the current target, which is scored (or generated) after them.

A template file is JSON with these fields (``{...}`` are placeholders; write ``{{`` for a brace):

    prompt   text before the target; needs {context} and {source}
    example  one previous pair, repeated oldest first into {context}; needs {source} and {target}
    target   how the target follows the prompt (default " {target}"); needs {target}
    end      what ends the target: "eos" (the tokenizer's end token), a string such as "\\n", or ""

{src_lang} and {tgt_lang} may appear in prompt and example (they need --src-lang/--tgt-lang,
language names such as "English"). The named template ``chat`` uses the tokenizer's own chat
template instead: every previous pair is a user turn and an assistant turn.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from commandkit.errors import json_reason
from commandkit.text import read_text
from contextual_mt.errors import Code, InputError

FIELDS = {
    "prompt": ({"context", "source"}, {"src_lang", "tgt_lang"}),
    "example": ({"source", "target"}, {"src_lang", "tgt_lang"}),
    "target": ({"target"}, set()),
}

NAMED: Dict[str, Dict[str, str]] = {
    "plain": {
        "prompt": "Translate from {src_lang} to {tgt_lang}.\n{context}{src_lang}: {source}\n{tgt_lang}:",
        "example": "{src_lang}: {source}\n{tgt_lang}: {target}\n",
        "target": " {target}",
        "end": "\n",
    },
    "chat": {},  # the tokenizer's chat template
}

CHAT_INSTRUCTION = "Translate each of my messages{langs}. Reply with the translation only.\n\n"


def placeholders(text: str) -> List[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as e:
        raise ValueError(f"bad braces ({e}); write {{{{ and }}}} for literal braces") from None


@dataclass(frozen=True)
class PromptTemplate:
    name: str  # the named template or the file
    prompt: str = ""
    example: str = ""
    target: str = " {target}"
    end: str = "eos"
    src_lang: Optional[str] = None
    tgt_lang: Optional[str] = None

    @property
    def chat(self) -> bool:
        return self.name == "chat"

    def describe(self) -> Dict:
        return {
            "name": self.name,
            "prompt": self.prompt,
            "example": self.example,
            "target": self.target,
            "end": self.end,
        }

    def _langs(self) -> Dict[str, str]:
        return {"src_lang": self.src_lang or "", "tgt_lang": self.tgt_lang or ""}

    def render_prompt(self, source: str, context: Sequence[Tuple[str, str]]) -> str:
        """The text before the target: the previous (source, target) pairs, oldest first."""
        langs = self._langs()
        ctx = "".join(self.example.format(source=s, target=t, **langs) for s, t in context)
        return self.prompt.format(context=ctx, source=source, **langs)

    def render_target(self, target: str) -> str:
        return self.target.format(target=target)

    def chat_messages(self, source: str, context: Sequence[Tuple[str, str]]) -> List[Dict[str, str]]:
        langs = f" from {self.src_lang} into {self.tgt_lang}" if self.src_lang and self.tgt_lang else ""
        messages: List[Dict[str, str]] = []
        for s, t in context:
            messages += [{"role": "user", "content": s}, {"role": "assistant", "content": t}]
        messages.append({"role": "user", "content": source})
        messages[0] = {"role": "user", "content": CHAT_INSTRUCTION.format(langs=langs) + messages[0]["content"]}
        return messages


def check_fields(spec: Dict, where: str, src_lang: Optional[str], tgt_lang: Optional[str]) -> None:
    unknown = sorted(set(spec) - set(FIELDS) - {"end"})
    if unknown:
        raise InputError(
            f"{where}: unknown field(s) {', '.join(unknown)} (a template has prompt, example, target and end)",
            code=Code.FORMAT,
        )
    for field, (needed, optional) in FIELDS.items():
        text = spec.get(field, " {target}" if field == "target" else None)
        if not isinstance(text, str):
            raise InputError(
                f"{where}: the field '{field}' is missing (or not a string); it needs "
                + " and ".join("{" + n + "}" for n in sorted(needed)),
                code=Code.FORMAT,
            )
        try:
            names = placeholders(text)
        except ValueError as e:
            raise InputError(f"{where}: field '{field}': {e}", code=Code.FORMAT) from None
        missing = sorted(needed - set(names))
        if missing:
            raise InputError(
                f"{where}: field '{field}' lacks the placeholder(s) " + ", ".join("{" + n + "}" for n in missing),
                code=Code.FORMAT,
            )
        bad = sorted(set(names) - needed - optional)
        if bad:
            raise InputError(
                f"{where}: field '{field}' has unknown placeholder(s) "
                + ", ".join("{" + (n or "") + "}" for n in bad)
                + " (allowed: "
                + ", ".join("{" + n + "}" for n in sorted(needed | optional))
                + ")",
                code=Code.FORMAT,
            )
        for lang, value, flag in (("src_lang", src_lang, "--src-lang"), ("tgt_lang", tgt_lang, "--tgt-lang")):
            if lang in names and not value:
                raise InputError(
                    f"{where}: field '{field}' names the language ({{{lang}}}): give {flag} "
                    "(a language name, e.g. English)",
                    code=Code.OPTION_MISSING,
                )
    if not isinstance(spec.get("end", "eos"), str):
        raise InputError(f'{where}: the field \'end\' must be a string ("eos", "\\n", ...)', code=Code.FORMAT)


def load_template(name_or_path: str, src_lang: Optional[str] = None, tgt_lang: Optional[str] = None) -> PromptTemplate:
    """A named template (``plain``, ``chat``) or a JSON template file, checked."""
    if name_or_path == "chat":
        return PromptTemplate("chat", src_lang=src_lang, tgt_lang=tgt_lang)
    if name_or_path in NAMED:
        spec, where = NAMED[name_or_path], f"--prompt-template {name_or_path}"
    else:
        if not os.path.isfile(name_or_path):
            raise InputError(
                f"{name_or_path}: prompt template not found (give a JSON file or one of: {', '.join(NAMED)})",
                code=Code.NOT_FOUND,
            )
        text = read_text(name_or_path)
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(
                f"{name_or_path}:{e.lineno}: not JSON ({json_reason(e, line=False)})", code=Code.FORMAT
            ) from None
        if not isinstance(spec, dict):
            raise InputError(
                f"{name_or_path}: a prompt template is a JSON object (prompt, example, target, end)", code=Code.FORMAT
            )
        where = name_or_path
    check_fields(spec, where, src_lang, tgt_lang)
    return PromptTemplate(
        name_or_path,
        spec["prompt"],
        spec["example"],
        spec.get("target", " {target}"),
        spec.get("end", "eos"),
        src_lang,
        tgt_lang,
    )
