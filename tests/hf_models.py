"""Small Hugging Face models built offline with random weights and real tokenizers trained on a
few sentences (a Marian with SentencePiece, a GPT-2 with byte-level BPE, an M2M100 with
language codes), saved with ``save_pretrained``: what the HF backend's tests and benchmark load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Sequence

EN = [
    "I see the small cat .",
    "It is green .",
    "The house is big and old .",
    "She sees a red car .",
    "We eat bread at home .",
    "It is very nice .",
    "They read the long book .",
    "He is tired today .",
    "My friend lives in Paris .",
    "The weather is cold .",
    "Where is the station ?",
    "I like music .",
]
FR = [
    "Je vois le petit chat .",
    "Il est vert .",
    "La maison est grande et vieille .",
    "Elle voit une voiture rouge .",
    "Nous mangeons du pain à la maison .",
    "C'est très joli .",
    "Ils lisent le long livre .",
    "Il est fatigué aujourd'hui .",
    "Mon ami habite à Paris .",
    "Le temps est froid .",
    "Où est la gare ?",
    "J'aime la musique .",
]


def write_voita_set(path: Path) -> Path:
    """A Voita-format contrastive set from EN/FR: 4 groups, the reference and one wrong variant of
    the current sentence, the previous sentence as context."""
    import json

    entries = []
    for i in (1, 3, 5, 8):
        other = FR[i].replace("est", "sont") if "est" in FR[i] else FR[i] + " !"
        entries.append(
            {
                "src": f"{EN[i - 1]} _eos {EN[i]}",
                "dst": [f"{FR[i - 1]} _eos {FR[i]}", f"{FR[i - 1]} _eos {other}"],
                "true_ind": 0,
                "ctx_dist": 1,
            }
        )
    path.write_text(json.dumps(entries))
    return path


def _spm(path: Path, lines: Sequence[str], vocab_size: int, bos_id: int = -1, eos_id: int = -1) -> Path:
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(lines) * 4),
        model_prefix=str(path),
        vocab_size=vocab_size,
        character_coverage=1.0,
        model_type="unigram",
        bos_id=bos_id,
        eos_id=eos_id,
        unk_id=0,
        pad_id=-1,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    return path.with_suffix(".model")


# the shape of Helsinki-NLP's opus-mt models (the speed benchmarks build it with random weights)
OPUS_MT_SIZE = {"d_model": 512, "layers": 6, "heads": 8, "ffn": 2048}


def build_marian(
    folder: Path,
    d_model: int = 32,
    layers: int = 2,
    heads: int = 2,
    ffn: int = 64,
    vocab_size: int = 0,
    lines_src: Sequence[str] = EN,
    lines_tgt: Sequence[str] = FR,
    spm_vocab: int = 120,
    max_positions: int = 128,
    seed: int = 0,
    marian_codes: bool = False,
) -> Path:
    """A Marian EN->FR model; ``vocab_size`` larger than the tokenizer's pads the embedding
    (a realistic output layer for benchmarks). ``marian_codes``: a multi-target model whose
    source starts with >>fra<< or >>spa<<."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    work = folder / "spm"
    work.mkdir(exist_ok=True)
    src = _spm(work / "source", lines_src, spm_vocab)
    tgt = _spm(work / "target", lines_tgt, spm_vocab)
    vocab: Dict[str, int] = {"</s>": 0, "<unk>": 1}
    if marian_codes:
        vocab.update({">>fra<<": 2, ">>spa<<": 3})
    for model in (src, tgt):
        proc = spm.SentencePieceProcessor(model_file=str(model))
        for i in range(proc.get_piece_size()):
            vocab.setdefault(proc.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tok = MarianTokenizer(str(src), str(tgt), str(work / "vocab.json"), model_max_length=max_positions)
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=max(vocab_size, len(vocab)),
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=max_positions,
        pad_token_id=vocab["<pad>"],
        eos_token_id=0,
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=0,
        share_encoder_decoder_embeddings=True,
    )
    model = MarianMTModel(config)
    with torch.no_grad():  # random but not tiny logits: scores differ clearly between contexts
        model.final_logits_bias.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


def build_gpt2(
    folder: Path,
    n_embd: int = 32,
    layers: int = 2,
    heads: int = 2,
    vocab_size: int = 400,
    max_positions: int = 256,
    seed: int = 0,
    chat_template: str = "",
) -> Path:
    """A GPT-2 with a byte-level BPE tokenizer trained on the EN and FR sentences."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        EN + FR + ["Translate from English to French.", "English: French:"],
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
    )
    work = folder / "bpe"
    work.mkdir(exist_ok=True)
    bpe.save_model(str(work))
    tok = GPT2TokenizerFast(
        vocab_file=str(work / "vocab.json"), merges_file=str(work / "merges.txt"), model_max_length=max_positions
    )
    if chat_template:
        tok.chat_template = chat_template
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=max_positions,
        n_embd=n_embd,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tok.eos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


CHAT = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_m2m100(folder: Path, d_model: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """An M2M100 (one SentencePiece model, language codes __en__, __fr__, ...): the target
    starts with its language code, forced and not scored."""
    import sentencepiece as spm
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    work = folder / "spm"
    work.mkdir(exist_ok=True)
    model = _spm(work / "joint", list(EN) + list(FR), 160)
    vocab: Dict[str, int] = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    proc = spm.SentencePieceProcessor(model_file=str(model))
    for i in range(proc.get_piece_size()):
        vocab.setdefault(proc.id_to_piece(i), len(vocab))
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tok = M2M100Tokenizer(str(work / "vocab.json"), str(model), src_lang="en", tgt_lang="fr", model_max_length=128)
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    config = M2M100Config(
        vocab_size=max([*tok.get_vocab().values(), *tok.lang_token_to_id.values()]) + 1,
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    M2M100ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def build_comet(folder: Path, lines: Sequence[str] = (), hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """A COMET model as unbabel-comet stores one (``hparams.yaml`` and ``checkpoints/model.ckpt``)
    and loads it (``comet.load_from_checkpoint``): a RegressionMetric with average pooling (so it
    has the document-context mode) on a random XLM-R encoder of ``layers`` layers. The encoder's
    config and SentencePiece tokenizer (trained on EN, FR and ``lines``; only the slow tokenizer's
    file, so that transformers converts it, as for xlm-roberta) are in ``folder/encoder``, whose
    path is the model's ``pretrained_model``: it loads offline."""
    import torch
    import yaml
    from transformers import XLMRobertaConfig, XLMRobertaTokenizer

    from muda.evaluation.metrics import quiet_comet

    with quiet_comet():  # unbabel-comet's import and model, as the project loads them
        import pytorch_lightning
        from comet.models import RegressionMetric

    encoder = folder / "encoder"
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    encoder.mkdir(exist_ok=True)
    # XLM-R's SentencePiece ids: <unk> 0, <s> 1, </s> 2 (the tokenizer shifts them by one)
    spm_model = _spm(folder / "spm", list(EN) + list(FR) + list(lines), 200, bos_id=1, eos_id=2)
    XLMRobertaTokenizer(str(spm_model), model_max_length=126).save_pretrained(encoder)
    (encoder / "tokenizer.json").unlink(missing_ok=True)
    tok = XLMRobertaTokenizer.from_pretrained(encoder)
    XLMRobertaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=130,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    ).save_pretrained(encoder)
    torch.manual_seed(seed)
    with quiet_comet():
        model = RegressionMetric(
            pretrained_model=str(encoder),
            load_pretrained_weights=False,
            hidden_sizes=[16],
            pool="avg",
            layer="mix",
            local_files_only=True,
        )
    with torch.no_grad():  # random but not flat: segments get clearly different scores
        for p in model.estimator.parameters():
            p.normal_(0, 0.5)
    hparams = dict(model.hparams)
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    torch.save(
        {
            "state_dict": model.state_dict(),
            "hyper_parameters": hparams,
            "pytorch-lightning_version": pytorch_lightning.__version__,
        },
        folder / "checkpoints" / "model.ckpt",
    )
    return folder
