"""The registered test-set formats, one module each (importing registers them)."""
from contextual_mt.contrastive.formats import bawden, contrapro, scat, voita  # noqa: F401
