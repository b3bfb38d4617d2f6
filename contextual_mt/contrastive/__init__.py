"""Contrastive evaluation: test sets in their authors' formats (``formats/``, registered in
``sets``), scored on the scoring backend (``run``)."""
