"""The phenomena MuDA tags: one module per phenomenon, each registering its tagger (see
``registry``). A tagger is a function ``(document, language, settings) -> list of sets of target
token indices`` (one set per sentence).

The modules are imported here in canonical order (lexical cohesion, formality, pronouns, verb
form, ellipsis): the order of registration is the order of tags in every output.
"""

# the order of these imports is the order of registration (see above): not sorted
# isort: off
from muda.phenomena import lexical_cohesion  # noqa: F401  (imported to register its tagger)
from muda.phenomena import formality  # noqa: F401  (imported to register its tagger)
from muda.phenomena import pronouns  # noqa: F401  (imported to register its tagger)
from muda.phenomena import verb_form  # noqa: F401  (imported to register its tagger)
from muda.phenomena import ellipsis  # noqa: F401  (imported to register its tagger)

# isort: on
from muda.phenomena.registry import (
    applicable,
    check_phenomena,
    get_tagger,
    phenomenon_names,
    register,
    required_annotations,
)

__all__ = ["applicable", "check_phenomena", "get_tagger", "phenomenon_names", "register", "required_annotations"]
