"""fairseq model registrations: the contextual_transformer architectures (with the multi-encoder
context encoder) and CADec, the two-pass context-aware decoder (imported for registration)."""

from contextual_mt.backends.fairseq.models.cadec import CADecModel  # noqa: F401
from contextual_mt.backends.fairseq.models.contextual_transformer import ContextualTransformerModel  # noqa: F401
