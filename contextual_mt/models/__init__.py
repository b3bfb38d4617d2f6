"""fairseq model registrations: the contextual_transformer architectures and the multi-encoder
context encoder (imported for registration)."""
from contextual_mt.models.contextual_transformer import ContextualTransformerModel  # noqa: F401
