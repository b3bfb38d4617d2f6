"""contextual_transformer: incremental decoding, checkpoints, fine-tuning."""

from argparse import Namespace

import pytest
import torch
from fairseq.sequence_generator import SequenceGenerator

from contextual_mt.backends.fairseq.tasks.document_translation import DocumentTranslationConfig, DocumentTranslationTask


def build(data_bin, multi_encoder=False, src_ctx=1, tgt_ctx=2, split="test"):
    cfg = DocumentTranslationConfig(
        data=str(data_bin), source_lang="en", target_lang="fr", source_context_size=src_ctx, target_context_size=tgt_ctx
    )
    cfg.seed, cfg.dataset_impl, cfg.train_subset = 1, None, "train"
    task = DocumentTranslationTask.setup_task(cfg)
    task.load_dataset(split)
    args = Namespace(
        arch="contextual_transformer_tiny",
        multi_encoder=multi_encoder,
        share_all_embeddings=True,
        max_source_positions=1024,
        max_target_positions=1024,
        dropout=0.0,
        encoder_layers_to_keep=None,
        decoder_layers_to_keep=None,
        context_encoder_layers=1,
    )
    from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY

    ARCH_CONFIG_REGISTRY[args.arch](args)
    torch.manual_seed(0)
    model = ARCH_MODEL_REGISTRY[args.arch].build_model(args, task)
    task.multi_encoder = multi_encoder
    task.datasets[split].multi_encoder = multi_encoder
    return task, model.eval(), args


def batch_of(task, split="test", n=6):
    ds = task.datasets[split]
    return ds.collater([ds[i] for i in range(n)])


@pytest.mark.parametrize("multi_encoder", [False, True])
def test_incremental_decoding_equals_full_recomputation(data_bin, multi_encoder):
    task, model, _ = build(data_bin, multi_encoder)
    sample = batch_of(task)
    ni = sample["net_input"]
    with torch.no_grad():
        full = model.get_normalized_probs(model(**ni), log_probs=True)
        enc_in = {k: v for k, v in ni.items() if k != "prev_output_tokens"}
        enc = model.encoder(**enc_in)
        state = {}
        steps = []
        prev = ni["prev_output_tokens"]
        for t in range(prev.size(1)):
            out = model.decoder(prev[:, : t + 1], encoder_out=enc, incremental_state=state)
            steps.append(model.get_normalized_probs(out, log_probs=True))
        incremental = torch.cat(steps, dim=1)
    mask = sample["target"].ne(task.tgt_dict.pad())
    assert torch.allclose(full[mask], incremental[mask], atol=1e-5)


@pytest.mark.parametrize("multi_encoder", [False, True])
def test_beam_search_matches_exhaustive_greedy(data_bin, multi_encoder):
    """SequenceGenerator (incremental, beam 1) equals greedy decoding by full recomputation."""
    task, model, _ = build(data_bin, multi_encoder, tgt_ctx=0)
    sample = batch_of(task, n=3)
    gen = SequenceGenerator([model], task.tgt_dict, beam_size=1, max_len_b=12, min_len=1)
    hypos = task.inference_step(gen, [model], sample)
    eos = task.tgt_dict.eos()
    for row in range(3):
        ni = {k: (v[row : row + 1] if torch.is_tensor(v) else v) for k, v in sample["net_input"].items()}
        tokens = torch.tensor([[eos]])
        for _ in range(13):
            ni["prev_output_tokens"] = tokens
            with torch.no_grad():
                lp = model.get_normalized_probs(model(**ni), log_probs=True)[0, -1]
            lp[task.tgt_dict.pad()] = -float("inf")
            if tokens.size(1) < 2:
                lp[eos] = -float("inf")  # min_len=1
            nxt = int(lp.argmax())
            tokens = torch.cat([tokens, torch.tensor([[nxt]])], dim=1)
            if nxt == eos:
                break
        if tokens[0, -1] != eos:
            tokens = torch.cat([tokens[:, :13], torch.tensor([[eos]])], dim=1)
        assert hypos[row][0]["tokens"].tolist() == tokens[0, 1:].tolist()


def test_finetune_grows_embeddings_and_initialises_context_encoder(data_bin):
    _task, model, _ = build(data_bin, multi_encoder=True)
    state = {k: v.clone() for k, v in model.state_dict().items() if ".context_encoder." not in k}
    state.pop("encoder.segment")
    emb = state["encoder.embed_tokens.weight"][:-2]  # a dictionary without <brk>, <mask>
    for key in [k for k in state if k.endswith("embed_tokens.weight") or k.endswith("output_projection.weight")]:
        state[key] = emb.clone() + 1.0
    _, fresh, _ = build(data_bin, multi_encoder=True)
    fresh.load_state_dict(state, strict=True)
    got = fresh.state_dict()
    assert torch.equal(got["encoder.embed_tokens.weight"][:-2], emb + 1.0)
    assert torch.equal(got["encoder.context_encoder.layers.0.fc1.weight"], state["encoder.layers.0.fc1.weight"])


@pytest.mark.parametrize(
    "arch,dim,ffn,layers,heads",
    [
        ("contextual_transformer", 512, 2048, 6, 8),
        ("contextual_transformer_small", 512, 1024, 6, 8),
        ("contextual_transformer_big", 1024, 4096, 6, 16),
        ("contextual_transformer_tiny", 128, 256, 2, 4),
    ],
)
def test_architecture_sizes(arch, dim, ffn, layers, heads):
    from fairseq.models import ARCH_CONFIG_REGISTRY

    args = Namespace()
    ARCH_CONFIG_REGISTRY[arch](args)
    for side in ("encoder", "decoder"):
        assert getattr(args, f"{side}_embed_dim") == dim
        assert getattr(args, f"{side}_ffn_embed_dim") == ffn
        assert getattr(args, f"{side}_layers") == layers
        assert getattr(args, f"{side}_attention_heads") == heads
    explicit = Namespace(encoder_layers=3)
    ARCH_CONFIG_REGISTRY[arch](explicit)
    assert explicit.encoder_layers == 3 and explicit.context_encoder_layers == 3
