"""The cross-language results table of ``contextual-mt pipeline table`` (``study_table``), one
module per job: ``options`` (TableOptions and the table's constants), ``read`` (each language's
``eval.json`` and ``scores.json``, checked), ``gather`` (the numbers and significance marks),
``markdown_csv`` (table.md, table.csv) and ``plot`` (table.png)."""
