"""The options of the ``muda`` commands, each declared once (default, help, flags) as a dataclass
field where the library reads them; ``muda.cli`` generates its parsers from them
(``commandkit.options``), and library callers (a pipeline built on muda, ``muda.api``) build them
directly. ``muda tag``'s are the tagger's ``TagOptions``, ``muda eval``'s the evaluation's
``EvalOptions``, ``muda download``'s ``DownloadOptions``, ``muda train-ellipsis``'s
``TrainEllipsisOptions``; the annotator models both tag and eval use, ``AnnotatorOptions``."""

from muda.annotators.download import DownloadOptions
from muda.annotators.ellipsis_bert import TrainEllipsisOptions
from muda.annotators.models import ANNOTATOR_GROUP, ANNOTATORS, DEFAULT_ANNOTATOR, AnnotatorOptions, cache_dir_option
from muda.evaluation.evaluate import EvalOptions
from muda.tagger import TagOptions

__all__ = [
    "ANNOTATORS",
    "ANNOTATOR_GROUP",
    "DEFAULT_ANNOTATOR",
    "AnnotatorOptions",
    "DownloadOptions",
    "EvalOptions",
    "TagOptions",
    "TrainEllipsisOptions",
    "cache_dir_option",
]
