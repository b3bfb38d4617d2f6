"""Inference outside fairseq's commands: checkpoint loading, the sentencepiece codec, beam search
with a context prefix, document translation, and the scoring backend used by the analyses."""
