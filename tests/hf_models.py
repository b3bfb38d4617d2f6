"""Small Hugging Face models built offline with random weights and real tokenizers trained on a
few sentences (a Marian with SentencePiece, a GPT-2 with byte-level BPE, an M2M100 with
language codes), saved with ``save_pretrained``: what the HF backend's tests and benchmark load."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, Tuple

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
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        EN + FR + ["Translate from English to French.", "English: French:"],
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
    )
    # the tokenizer.json and a config naming GPT-2's tokenizer class: what transformers 4 (its fast
    # GPT-2 tokenizer) and 5 (whose tokenizer classes no longer take vocab and merges files) both read
    bpe.save(str(folder / "tokenizer.json"))
    end = "<|endoftext|>"
    config = {"tokenizer_class": "GPT2Tokenizer", "bos_token": end, "eos_token": end, "unk_token": end}
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": max_positions}))
    tok = AutoTokenizer.from_pretrained(folder)
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


def build_m2m100(folder: Path, d_model: int = 32, layers: int = 2, seed: int = 0, lines: Sequence[str] = ()) -> Path:
    """An M2M100 (one SentencePiece model, language codes __en__, __fr__, ...): the target
    starts with its language code, forced and not scored."""
    import sentencepiece as spm
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    work = folder / "spm"
    work.mkdir(exist_ok=True)
    model = _spm(work / "joint", list(EN) + list(FR) + list(lines), 160)
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


# ---------------------------------------------------------------------------------------------
# The model zoo: one tiny random model per family a researcher brings, built from its transformers
# config class offline (tests/contextual_mt/hf/test_zoo.py takes each through every --hf-model
# command; docs/reference/supported-models.md is generated from that run). Decoder-only tokenizers
# are byte-level BPE trained on the demo sentences with the family's special tokens, and the chat
# template is written into the tokenizer config in the family's published format (written here).

# sentences with multi-byte characters and emoji: in every tokenizer's training text, so that
# answers holding them decode whole
MULTIBYTE = ["J'adore la pizza 🍕 — ça coûte 5 € !", "Zoë lit « Ἀθῆναι » 日本 👍🏽 ."]
ZOO_TEXT = [*EN, *FR, *MULTIBYTE, "Translate each of my messages. Reply with the translation only."]

LLAMA3_CHAT = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' "
    "+ message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)
MISTRAL_CHAT = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)
QWEN2_CHAT = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
QWEN3_CHAT = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}{% set content = message['content'] %}"
    "{% if '</think>' in content %}{% set content = content.split('</think>')[-1].lstrip('\\n') %}{% endif %}"
    "{{ '<|im_start|>assistant\\n' + content + '<|im_end|>\\n' }}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}"
    "{% endif %}"
)
GEMMA2_CHAT = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)
GEMMA3_CHAT = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{% set first_user_prefix = messages[0]['content'] + '\\n\\n' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set first_user_prefix = '' %}{% set loop_messages = messages %}{% endif %}"
    "{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)
PHI3_CHAT = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<|system|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% elif message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ '<|assistant|>\\n' + message['content'] + '<|end|>\\n' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)
OLMO2_CHAT = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<|system|>\\n' + message['content'] + '\\n' }}"
    "{% elif message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + '\\n' }}"
    "{% elif message['role'] == 'assistant' %}{% if not loop.last %}"
    "{{ '<|assistant|>\\n' + message['content'] + eos_token + '\\n' }}"
    "{% else %}{{ '<|assistant|>\\n' + message['content'] + eos_token }}{% endif %}{% endif %}"
    "{% if loop.last and add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}{% endfor %}"
)


def _byte_bpe(
    folder: Path,
    specials: Sequence[str],
    bos: Optional[str],
    eos: str,
    pad: Optional[str],
    chat_template: str,
    add_bos: bool,
    unk: Optional[str] = None,
    vocab_size: int = 500,
):
    """A byte-level BPE tokenizer with ``specials`` (ids 0, 1, ... in order), saved to ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(ZOO_TEXT * 2, trainer)
    steps = [processors.ByteLevel(trim_offsets=False)]
    if add_bos and bos:  # Llama, Mistral, Gemma, OLMo-2 put their BOS first when special tokens are added
        steps.append(
            processors.TemplateProcessing(
                single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tk.token_to_id(bos))]
            )
        )
    tk.post_processor = processors.Sequence(steps)
    named = {bos, eos, pad, unk}
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token=bos,
        eos_token=eos,
        pad_token=pad,
        unk_token=unk,
        additional_special_tokens=[s for s in specials if s not in named],
        model_max_length=256,
    )
    tok.chat_template = chat_template
    tok.save_pretrained(folder)
    return tok


@dataclass(frozen=True)
class CausalSpec:
    """A decoder-only family: its config class, special tokens (the first ones get ids 0, 1, ...),
    which are BOS/EOS/PAD, the end tokens its generation config declares, its chat template and
    config fields."""

    config: str
    model: str
    specials: Tuple[str, ...]
    bos: Optional[str]
    eos: str
    pad: Optional[str]
    ends: Tuple[str, ...]  # generation_config.eos_token_id (every token that ends an answer)
    chat: str
    add_bos: bool = True
    config_fields: Tuple[Tuple[str, object], ...] = ()
    unk: Optional[str] = None


LLAMA3_SPECIALS = ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>")
LLAMA3_SPECIALS += ("<|eom_id|>", "<|eot_id|>")
QWEN_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>")
GEMMA_SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>")
_COMMON = (("hidden_size", 32), ("intermediate_size", 64), ("num_hidden_layers", 2), ("num_attention_heads", 4))
_COMMON += (("num_key_value_heads", 2), ("max_position_embeddings", 256), ("tie_word_embeddings", False))

CAUSAL: Dict[str, CausalSpec] = {
    # Llama-3: the base tokenizer's EOS <|end_of_text|>, the turn ends with <|eot_id|>, and the
    # generation config declares three end tokens (Llama-3.1/3.2)
    "llama": CausalSpec(
        "LlamaConfig",
        "LlamaForCausalLM",
        LLAMA3_SPECIALS,
        "<|begin_of_text|>",
        "<|end_of_text|>",
        None,
        ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>"),
        LLAMA3_CHAT,
    ),
    "mistral": CausalSpec(
        "MistralConfig",
        "MistralForCausalLM",
        ("<unk>", "<s>", "</s>", "[INST]", "[/INST]"),
        "<s>",
        "</s>",
        None,
        ("</s>",),
        MISTRAL_CHAT,
        unk="<unk>",
        config_fields=(("sliding_window", 16),),
    ),
    "qwen2": CausalSpec(
        "Qwen2Config",
        "Qwen2ForCausalLM",
        QWEN_SPECIALS,
        None,
        "<|im_end|>",
        "<|endoftext|>",
        ("<|im_end|>", "<|endoftext|>"),
        QWEN2_CHAT,
        add_bos=False,
    ),
    "qwen3": CausalSpec(
        "Qwen3Config",
        "Qwen3ForCausalLM",
        QWEN_SPECIALS,
        None,
        "<|im_end|>",
        "<|endoftext|>",
        ("<|im_end|>", "<|endoftext|>"),
        QWEN3_CHAT,
        add_bos=False,
        config_fields=(("head_dim", 8),),
    ),
    # Gemma-2/3: soft-capped logits, sliding and global layers, no system role in the template
    "gemma2": CausalSpec(
        "Gemma2Config",
        "Gemma2ForCausalLM",
        GEMMA_SPECIALS,
        "<bos>",
        "<eos>",
        "<pad>",
        ("<eos>", "<end_of_turn>"),
        GEMMA2_CHAT,
        unk="<unk>",
        config_fields=(
            ("head_dim", 8),
            ("sliding_window", 16),
            ("attn_logit_softcapping", 50.0),
            ("final_logit_softcapping", 30.0),
            ("query_pre_attn_scalar", 8),
        ),
    ),
    "gemma3": CausalSpec(
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        GEMMA_SPECIALS,
        "<bos>",
        "<eos>",
        "<pad>",
        ("<eos>", "<end_of_turn>"),
        GEMMA3_CHAT,
        unk="<unk>",
        config_fields=(
            ("head_dim", 8),
            ("sliding_window", 16),
            ("query_pre_attn_scalar", 8),
            ("layer_types", ["sliding_attention", "full_attention"]),
        ),
    ),
    "phi3": CausalSpec(
        "Phi3Config",
        "Phi3ForCausalLM",
        ("<unk>", "<s>", "</s>", "<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"),
        "<s>",
        "<|endoftext|>",
        "<|endoftext|>",
        ("<|endoftext|>", "<|end|>"),
        PHI3_CHAT,
        add_bos=False,
        unk="<unk>",
        config_fields=(("original_max_position_embeddings", 256),),
    ),
    "olmo2": CausalSpec(
        "Olmo2Config",
        "Olmo2ForCausalLM",
        ("<|endoftext|>", "<|pad|>", "<|system|>", "<|user|>", "<|assistant|>"),
        "<|endoftext|>",
        "<|endoftext|>",
        "<|pad|>",
        ("<|endoftext|>",),
        OLMO2_CHAT,
        add_bos=False,
    ),
}


def build_causal(folder: Path, family: str, seed: int = 0) -> Path:
    """The tiny decoder-only model of ``family`` (a key of CAUSAL)."""
    import torch
    import transformers
    from transformers import GenerationConfig

    spec = CAUSAL[family]
    folder.mkdir(parents=True, exist_ok=True)
    tok = _byte_bpe(folder, spec.specials, spec.bos, spec.eos, spec.pad, spec.chat, spec.add_bos, spec.unk)
    ids = {t: tok.convert_tokens_to_ids(t) for t in spec.specials}
    ends = [ids[t] for t in spec.ends]
    fields = dict(_COMMON)
    fields.update(spec.config_fields)
    config = getattr(transformers, spec.config)(
        vocab_size=len(tok),
        bos_token_id=ids.get(spec.bos) if spec.bos else None,
        eos_token_id=ends if len(ends) > 1 else ends[0],
        pad_token_id=ids.get(spec.pad) if spec.pad else None,
        **fields,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, spec.model)(config)
    with torch.no_grad():  # random but not flat logits
        model.get_output_embeddings().weight.normal_(0, 0.5)
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=ends, pad_token_id=config.pad_token_id
    )
    model.save_pretrained(folder)
    return folder


def _spm_dir(folder: Path, name: str, **train) -> Path:
    import sentencepiece as spm

    work = folder / "spm"
    work.mkdir(parents=True, exist_ok=True)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(ZOO_TEXT * 4),
        model_prefix=str(work / name),
        vocab_size=train.pop("vocab_size", 180),
        character_coverage=1.0,
        model_type="unigram",
        hard_vocab_limit=False,
        byte_fallback=False,
        minloglevel=2,
        **train,
    )
    return work / f"{name}.model"


def _seq2seq_tokenizer(folder: Path, spm_model: Path, file_name: str, config: Dict):
    """The tokenizer as the Hub stores it (the SentencePiece file and tokenizer_config.json), read
    back with AutoTokenizer (which builds the fast tokenizer from it) and saved whole."""
    import shutil

    from transformers import AutoTokenizer

    shutil.copy(spm_model, folder / file_name)
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tok = AutoTokenizer.from_pretrained(folder)
    tok.save_pretrained(folder)
    return AutoTokenizer.from_pretrained(folder)


def _seq2seq_config(cls_name: str, tok, **fields):
    import transformers

    size = max(len(tok), max(tok.get_vocab().values()) + 1)
    dims = {
        "d_model": 32,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_attention_heads": 2,
        "decoder_attention_heads": 2,
        "encoder_ffn_dim": 64,
        "decoder_ffn_dim": 64,
        "max_position_embeddings": 128,
    }
    dims.update(fields)
    return getattr(transformers, cls_name)(vocab_size=size, **dims)


def build_mbart50(folder: Path, seed: int = 0) -> Path:
    """mBART-50 (many-to-many): language codes en_XX, fr_XX, ...; the target starts with its code
    after the decoder start token </s>."""
    import torch
    from transformers import MBartForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    model_file = _spm_dir(folder, "mbart", unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    tok = _seq2seq_tokenizer(
        folder,
        model_file,
        "sentencepiece.bpe.model",
        {"tokenizer_class": "MBart50Tokenizer", "src_lang": "en_XX", "tgt_lang": "fr_XX", "model_max_length": 128},
    )
    config = _seq2seq_config(
        "MBartConfig",
        tok,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
        scale_embedding=True,
    )
    torch.manual_seed(seed)
    model = MBartForConditionalGeneration(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


NLLB_CODES = ["deu_Latn", "eng_Latn", "fra_Latn", "jpn_Jpan", "spa_Latn", "zho_Hans"]


def build_nllb(folder: Path, seed: int = 0) -> Path:
    """NLLB-200 (an M2M100 model): language codes eng_Latn, fra_Latn, ...; the source starts with
    its code, the target with its own after the decoder start token </s>."""
    import torch
    from transformers import M2M100ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    model_file = _spm_dir(folder, "nllb", unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    tok = _seq2seq_tokenizer(
        folder,
        model_file,
        "sentencepiece.bpe.model",
        {
            "tokenizer_class": "NllbTokenizer",
            "src_lang": "eng_Latn",
            "tgt_lang": "fra_Latn",
            "model_max_length": 128,
            # as NLLB-200's own config lists them (transformers 5 adds none by itself)
            "additional_special_tokens": NLLB_CODES,
        },
    )
    config = _seq2seq_config(
        "M2M100Config",
        tok,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
        scale_embedding=True,
    )
    torch.manual_seed(seed)
    M2M100ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def build_madlad(folder: Path, seed: int = 0) -> Path:
    """A MADLAD-400-style T5: the target language as a <2fr> token at the start of the source,
    untied output layer, relative positions."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    codes = ["<2en>", "<2fr>", "<2de>"]
    model_file = _spm_dir(folder, "t5", unk_id=2, bos_id=-1, eos_id=1, pad_id=0, user_defined_symbols=codes)
    tok = _seq2seq_tokenizer(
        folder,
        model_file,
        "spiece.model",
        {"tokenizer_class": "T5Tokenizer", "extra_ids": 0, "legacy": False, "model_max_length": 128},
    )
    size = max(len(tok), max(tok.get_vocab().values()) + 1)
    config = T5Config(
        vocab_size=size,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        tie_word_embeddings=False,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
        feed_forward_proj="gated-gelu",
    )
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    with torch.no_grad():
        model.lm_head.weight.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


@dataclass(frozen=True)
class ZooFamily:
    """How a family is built and the --hf-model options a researcher gives it (languages)."""

    kind: str  # seq2seq | causal
    build: Callable[[Path], Path]
    src_lang: Optional[str] = None
    tgt_lang: Optional[str] = None


def _causal(family: str) -> ZooFamily:
    return ZooFamily("causal", lambda folder: build_causal(folder, family))


# the zoo's tolerances (tests/contextual_mt/hf/test_zoo.py asserts them; bench/zoo_cuda.py holds
# CUDA against CPU to them): float32 scores, per token, in nats
TOL = 1e-5
# bfloat16 against float32, per token P-CXMI in nats: the zoo's worst was 0.12 (Gemma-3; seq2seq
# families 0.003-0.1, decoder-only 0.003-0.12, under transformers 4.57)
BF16_TOL = 0.25

ZOO: Dict[str, ZooFamily] = {
    "marian": ZooFamily("seq2seq", lambda f: build_marian(f, lines_src=[*EN, *MULTIBYTE], lines_tgt=[*FR, *MULTIBYTE])),
    "mbart50": ZooFamily("seq2seq", build_mbart50, "en_XX", "fr_XX"),
    "m2m100": ZooFamily("seq2seq", lambda f: build_m2m100(f, lines=MULTIBYTE), "en", "fr"),
    "nllb": ZooFamily("seq2seq", build_nllb, "eng_Latn", "fra_Latn"),
    "madlad": ZooFamily("seq2seq", build_madlad, None, "fr"),
    "gpt2": ZooFamily("causal", build_gpt2, "English", "French"),
    **{name: _causal(name) for name in CAUSAL},
}


# ---------------------------------------------------------------------------------------------
# Families outside the zoo: built the same way from their transformers config classes, with no
# knowledge of them in the backend (tests/contextual_mt/hf/test_zoo.py, test_outside_the_zoo).
# Decoder-only ones are base models: a byte-level BPE tokenizer without a chat template, read
# with the plain prompt.

_PLAIN = {"src_lang": "English", "tgt_lang": "French"}
OUTSIDE_CAUSAL: Dict[str, Tuple[str, str, Dict[str, object]]] = {
    "opt": (
        "OPTConfig",
        "OPTForCausalLM",
        {
            "hidden_size": 32,
            "ffn_dim": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "word_embed_proj_dim": 32,
            "max_position_embeddings": 256,
        },
    ),
    "bloom": ("BloomConfig", "BloomForCausalLM", {"hidden_size": 32, "n_layer": 2, "n_head": 4}),
    "gpt_neox": (
        "GPTNeoXConfig",
        "GPTNeoXForCausalLM",
        {
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "max_position_embeddings": 256,
        },
    ),
    "falcon": (
        "FalconConfig",
        "FalconForCausalLM",
        {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 256},
    ),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM", dict(_COMMON)),
    "phi": ("PhiConfig", "PhiForCausalLM", dict(_COMMON)),
    "cohere": ("CohereConfig", "CohereForCausalLM", dict(_COMMON)),
    "granite": ("GraniteConfig", "GraniteForCausalLM", dict(_COMMON)),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM", dict(_COMMON)),
    "gptj": (
        "GPTJConfig",
        "GPTJForCausalLM",
        {"n_embd": 32, "n_layer": 2, "n_head": 4, "rotary_dim": 4, "n_positions": 256},
    ),
}


def build_outside_causal(folder: Path, family: str, seed: int = 0) -> Path:
    import torch
    import transformers

    config_class, model_class, fields = OUTSIDE_CAUSAL[family]
    folder.mkdir(parents=True, exist_ok=True)
    end = "<|endoftext|>"
    tok = _byte_bpe(folder, (end,), end, end, None, "", add_bos=False)
    config = getattr(transformers, config_class)(
        vocab_size=len(tok), bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, **fields
    )
    torch.manual_seed(seed)
    model = getattr(transformers, model_class)(config)
    with torch.no_grad():
        model.get_output_embeddings().weight.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


def build_bart(folder: Path, seed: int = 0) -> Path:
    """BART: byte-level BPE (<s> source </s>), the decoder started by </s> <s>."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartForConditionalGeneration, BartTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(ZOO_TEXT * 2, vocab_size=500, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    tok = BartTokenizerFast(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=128)
    tok.save_pretrained(folder)
    config = _seq2seq_config(
        "BartConfig",
        tok,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
        forced_bos_token_id=tok.bos_token_id,
    )
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


def build_mt5(folder: Path, seed: int = 0) -> Path:
    """mT5: SentencePiece (pad 0, </s> 1, <unk> 2), no language codes."""
    import torch
    from transformers import MT5Config, MT5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    model_file = _spm_dir(folder, "mt5", unk_id=2, bos_id=-1, eos_id=1, pad_id=0)
    tok = _seq2seq_tokenizer(
        folder,
        model_file,
        "spiece.model",
        {"tokenizer_class": "T5Tokenizer", "extra_ids": 0, "legacy": False, "model_max_length": 128},
    )
    config = MT5Config(
        vocab_size=max(len(tok), max(tok.get_vocab().values()) + 1),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    model = MT5ForConditionalGeneration(config)
    with torch.no_grad():
        model.lm_head.weight.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


def build_pegasus(folder: Path, seed: int = 0) -> Path:
    """Pegasus: SentencePiece behind its 103 reserved ids (pad 0, </s> 1), sinusoidal positions."""
    import torch
    from transformers import PegasusForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    model_file = _spm_dir(folder, "pegasus", unk_id=2, bos_id=-1, eos_id=1, pad_id=0)
    tok = _seq2seq_tokenizer(
        folder, model_file, "spiece.model", {"tokenizer_class": "PegasusTokenizer", "model_max_length": 128}
    )
    config = _seq2seq_config(
        "PegasusConfig",
        tok,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
        forced_eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    model = PegasusForConditionalGeneration(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0, 0.5)
    model.save_pretrained(folder)
    return folder


def build_fsmt(folder: Path, seed: int = 0) -> Path:
    """FSMT (fairseq's WMT19 models): Moses tokenization, separate source and target vocabularies
    (characters, word-final ones marked </w>: no merges), untied embeddings."""
    import torch
    from transformers import FSMTConfig, FSMTForConditionalGeneration, FSMTTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocabs = []
    for lines in (EN + MULTIBYTE, FR + MULTIBYTE):
        vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
        for ch in sorted({c for line in lines for c in line if not c.isspace()} | set("&#;apos")):
            vocab.setdefault(ch, len(vocab))
            vocab.setdefault(ch + "</w>", len(vocab))
        vocabs.append(vocab)
    for name, vocab in zip(("vocab-src.json", "vocab-tgt.json"), vocabs, strict=True):
        (folder / name).write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tok = FSMTTokenizer(
        ["en", "fr"], str(folder / "vocab-src.json"), str(folder / "vocab-tgt.json"), str(folder / "merges.txt")
    )
    tok.model_max_length = 256
    tok.save_pretrained(folder)
    config = FSMTConfig(
        langs=["en", "fr"],
        src_vocab_size=len(vocabs[0]),
        tgt_vocab_size=len(vocabs[1]),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    torch.manual_seed(seed)
    FSMTForConditionalGeneration(config).save_pretrained(folder)
    return folder


def build_prophetnet(folder: Path, seed: int = 0) -> Path:
    """ProphetNet: a WordPiece vocabulary ([SEP] ends a sequence), n-gram prediction streams."""
    import torch
    from transformers import ProphetNetConfig, ProphetNetForConditionalGeneration, ProphetNetTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    words = {w for line in ZOO_TEXT for w in line.lower().replace("'", " ' ").split()}
    chars = {c for line in ZOO_TEXT for c in line.lower() if not c.isspace()}
    tokens = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "[X_SEP]", *sorted(words | chars)]
    tokens += sorted("##" + c for c in chars)
    (folder / "prophetnet.tokenizer").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    tok = ProphetNetTokenizer(str(folder / "prophetnet.tokenizer"), model_max_length=128)
    tok.save_pretrained(folder)
    config = ProphetNetConfig(
        vocab_size=len(tokens),
        hidden_size=32,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_encoder_layers=2,
        num_decoder_layers=2,
        num_encoder_attention_heads=2,
        num_decoder_attention_heads=2,
        max_position_embeddings=128,
        ngram=2,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        decoder_start_token_id=tok.sep_token_id,
    )
    torch.manual_seed(seed)
    ProphetNetForConditionalGeneration(config).save_pretrained(folder)
    return folder


OUTSIDE: Dict[str, ZooFamily] = {
    **{
        name: ZooFamily("causal", lambda f, name=name: build_outside_causal(f, name), **_PLAIN)
        for name in OUTSIDE_CAUSAL
    },
    "bart": ZooFamily("seq2seq", build_bart),
    "mt5": ZooFamily("seq2seq", build_mt5),
    "pegasus": ZooFamily("seq2seq", build_pegasus),
    "fsmt": ZooFamily("seq2seq", build_fsmt),
    "prophetnet": ZooFamily("seq2seq", build_prophetnet),
}
