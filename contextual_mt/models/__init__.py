from contextual_mt.models.contextual_transformer import ContextualTransformerModel  # noqa: F401
