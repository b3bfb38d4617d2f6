"""Annotators: what turns raw text into the annotations the tagger needs (morphology,
coreference, alignments, ellipsis), from models (stanza, awesome-align, a BERT classifier) or by
lookup in an annotated corpus. All implement the ``Annotator`` protocol of ``base``."""
