"""commandkit: what the command-line tools of contextual_mt and muda are built on (neither package is imported here)."""
