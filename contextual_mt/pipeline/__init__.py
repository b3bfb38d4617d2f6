"""The per-language-pair study: data, training, translation, scoring and the cross-pair table."""
