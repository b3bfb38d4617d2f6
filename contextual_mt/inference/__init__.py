"""What every model backend shares, written against no backend (the backends, in ``backends/``,
implement it and register themselves): the interface (``interface``: the scorer protocols, the
translator, the model family, the model specification), the registry of families (``registry``),
which sentences are context (``context_trim``), the one batching rule (``batching``), decoding
options (``decoding``), the one decoding driver (``waves``), floating-point precision
(``precision``), model health checks (``model_health``) and file translation (``translate``;
``document_unit`` and ``document_output`` for ``--unit document``)."""
