"""fairseq data: sentences with their document context (ContextDataset) and the model inputs built from them."""
