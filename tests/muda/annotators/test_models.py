"""The real model-loading code of the muda annotators, exercised with small models built here
(a tiny random BERT for the aligner and the ellipsis classifier; stanza Documents from CoNLL-U)."""

import pytest

from commandkit.errors import InputError
from tests.muda.helpers import PTB_TREES as TREES


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    d = tmp_path_factory.mktemp("tiny-bert")
    words = [
        "i",
        "do",
        "n't",
        "she",
        "ate",
        "an",
        "apple",
        "both",
        "did",
        "we",
        "like",
        "cats",
        ".",
        "je",
        "ne",
        "mange",
        "pas",
        "elle",
        "une",
        "pomme",
        "les",
        "chats",
    ]
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tok = BertTokenizerFast(vocab_file=str(d / "vocab.txt"), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(str(d))
    tok.save_pretrained(str(d))
    return d


def test_awesome_aligner_with_a_tiny_bert(tiny_bert):
    from muda.annotators.awesome_align import AwesomeAligner

    aligner = AwesomeAligner(str(tiny_bert), layer=8, batch_size=2, device="cpu")
    src = [["she", "ate", "an", "apple", "."], ["we", "like", "cats", "."], [], ["i", "do"]]
    tgt = [["she", "ate", "an", "apple", "."], ["les", "chats", "."], ["je"], ["i", "do"]]
    out = aligner.align(src, tgt)
    assert len(out) == 4 and out[2] == set()  # an empty side aligns nothing
    for pairs, s, t in zip(out, src, tgt, strict=True):
        assert all(0 <= i < len(s) and 0 <= j < len(t) for i, j in pairs)
    # identical sentences: each word's embedding is closest to itself in both directions
    assert {(i, i) for i in range(5)} <= out[0] and {(0, 0), (1, 1)} <= out[3]


def test_missing_align_model_is_one_clear_error(tmp_path):
    from muda.annotators.awesome_align import AwesomeAligner

    with pytest.raises(InputError, match=r"alignment model .* not found locally.*--alignments"):
        AwesomeAligner(str(tmp_path / "nothing-here"))


def test_train_ellipsis_saves_a_model_that_loads_and_predicts(tiny_bert, tmp_path):
    from muda.annotators.ellipsis_bert import EllipsisClassifier, TrainEllipsisOptions, train_ellipsis

    (tmp_path / "a.mrg").write_text(TREES * 4)
    options = TrainEllipsisOptions(
        ptb=[str(tmp_path / "a.mrg")],
        base_model=str(tiny_bert),
        output=str(tmp_path / "model"),
        epochs=3,
        batch_size=4,
        lr=1e-3,
        cpu=True,
    )
    result = train_ellipsis(options, progress=False)
    assert result["sentences"] == 16 and result["positives"] == 8
    clf = EllipsisClassifier(str(tmp_path / "model"), device="cpu")
    pred = clf.predict(["I do n't .", "", "She ate an apple ."])
    assert len(pred) == 3 and pred[1] is False and all(isinstance(p, bool) for p in pred)
    with pytest.raises(InputError, match=r"ellipsis model .* not found"):
        EllipsisClassifier(str(tmp_path / "none"))


def test_stanza_documents_with_coreference_become_corefud(tmp_path):
    from stanza.models.coref.coref_chain import CorefChain, CorefMention
    from stanza.utils.conll import CoNLL

    from muda.annotators.stanza_pipeline import StanzaAnnotator
    from muda.formats.conllu import format_conllu, parse_conllu
    from muda.formats.coref import add_corefud, corefud_mentions

    conllu = (
        "1\tI\tI\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\tsee\tsee\tVERB\t_\t_\t0\troot\t_\t_\n"
        "3\tthe\tthe\tDET\t_\t_\t4\tdet\t_\t_\n4\thouse\thouse\tNOUN\t_\t_\t2\tobj\t_\t_\n\n"
        "1\tIt\tit\tPRON\t_\t_\t2\tnsubj\t_\t_\n2\tis\tbe\tAUX\t_\t_\t0\troot\t_\t_\n\n"
    )
    sdoc = CoNLL.conll2doc(input_str=conllu)
    sdoc.coref = [CorefChain(0, [CorefMention(0, 2, 4), CorefMention(1, 0, 1)], "the house", 0)]

    class Pipeline:
        def bulk_process(self, docs):
            assert [d.text for d in docs] == ["I see the house\n\nIt is"]
            return [sdoc]

    [(sents, mentions)] = StanzaAnnotator("en", pipeline=Pipeline()).annotate_documents(
        [["I see the house", "", "It is"]]
    )
    assert [s.forms for s in sents] == [["I", "see", "the", "house"], [], ["It", "is"]]
    assert [(m.sentence, m.start, m.end) for m in mentions] == [(0, 2, 3), (2, 0, 0)]
    add_corefud(sents, mentions)
    again = parse_conllu(format_conllu(sents).splitlines())
    assert [(m.entity, m.sentence, m.start, m.end) for m in corefud_mentions(again)] == [
        ("e0", 0, 2, 3),
        ("e0", 2, 0, 0),
    ]
