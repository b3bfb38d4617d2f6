"""Compact builders for hand-written annotated sentences, and small sample files (tests only)."""
from muda.annotation import Sentence, Token, Word, parse_feats
from muda.document import Document, SentencePair
from muda.formats.coref import CorefIndex, corefud_mentions


def S(*tokens):
    """S(("Tu", "PRON", "Person=2|Number=Sing", 2, "nsubj"), ...): head/deprel default to a flat
    tree; a sixth item is MISC (e.g. "Entity=(e1)"), a seventh the lemma (default: lowercase form)."""
    toks = []
    for i, t in enumerate(tokens, start=1):
        t = tuple(t) + (None,) * (7 - len(t))
        form, upos, feats, head, deprel, misc, lemma = t
        misc_d = dict(x.partition("=")[::2] for x in misc.split("|")) if misc else {}
        toks.append(Token(form, [Word(i, form, lemma or form.lower(), upos or "X", parse_feats(feats or "_"),
                                      0 if head is None else head, deprel or ("root" if i == 1 else "dep"), misc_d)]))
    return Sentence(toks)


def doc(pairs, doc_id="d1"):
    """pairs: (src Sentence, tgt Sentence, alignment set, src_elliptical)."""
    sp = [SentencePair(s, t, set(a), bool(e)) for s, t, a, e in pairs]
    return Document(doc_id, sp, CorefIndex(corefud_mentions([p.src for p in sp])))


def W(sentence_text, upos="X"):
    """A sentence of plain words with one UPOS (filler)."""
    return S(*[(w, upos) for w in sentence_text.split()])


# Penn Treebank trees: two with the ellipsis trace *?*, two without
PTB_TREES = """( (S (NP-SBJ (PRP I)) (VP (VBP do) (RB n't) (VP (-NONE- *?*) )) (. .)) )
( (S (NP-SBJ (PRP She)) (VP (VBD ate) (NP (DT an) (NN apple))) (. .)) )
( (S (NP-SBJ (DT Both)) (VP (VBD did) (VP (-NONE- *?*))) (. .)) )
( (S (NP-SBJ (PRP We)) (VP (VBP like) (NP (NNS cats))) (. .)) )
"""
