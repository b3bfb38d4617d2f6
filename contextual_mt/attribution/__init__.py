"""Context attribution (``contextual-mt attribute``): which target tokens depend on context
(CTI: P-CXMI or KL per token) and which context tokens they depend on (CCI: gradient or
attention attribution of the contextual prediction's contrast), batched for every backend."""
