"""The lexicon annotator's words: tokenized text as it is; detokenized text split where the
annotated corpus knows the pieces and not the whole."""

from muda.annotators.lexicon import LexiconAnnotator


def annotator(tmp_path):
    sentences = [["Salut", "Paul", ",", "mon", "ami", "."], ["l'", "homme", "voit", "aujourd'hui", "."]]
    conllu = []
    for n, words in enumerate(sentences, start=1):
        conllu.append(f"# sent_id = {n}\n# text = {' '.join(words)}")
        conllu += [f"{k}\t{w}\t{w.lower()}\tX\t_\t_\t0\troot\t_\t_" for k, w in enumerate(words, start=1)]
        conllu.append("")
    (tmp_path / "a.conllu").write_text("\n".join(conllu) + "\n")
    (tmp_path / "a.align").write_text("0-0\n0-0\n")
    return LexiconAnnotator(str(tmp_path / "a.conllu"), str(tmp_path / "a.conllu"), str(tmp_path / "a.align"))


def test_tokenized_text_is_left_as_it_is(tmp_path):
    lex = annotator(tmp_path)
    assert lex.words("Salut Paul , mon ami .") == ["Salut", "Paul", ",", "mon", "ami", "."]
    assert lex.words("l' homme voit aujourd'hui .") == ["l'", "homme", "voit", "aujourd'hui", "."]


def test_detokenized_text_is_split_into_corpus_words(tmp_path):
    lex = annotator(tmp_path)
    assert lex.words("Salut Paul, mon ami.") == ["Salut", "Paul", ",", "mon", "ami", "."]
    assert lex.words("l'homme voit aujourd'hui.") == ["l'", "homme", "voit", "aujourd'hui", "."]
    assert lex.words("(ami)") == ["(", "ami", ")"]
    # unknown words keep their punctuation-free core; unknown elisions stay whole
    assert lex.words("zorglub!") == ["zorglub", "!"] and lex.words("d'homme") == ["d'homme"]
    assert [t.form for t in lex.target(["mon ami."])[0].tokens] == ["mon", "ami", "."]
