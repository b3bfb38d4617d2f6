"""``python -m contextual_mt.demo [options]`` = ``contextual-mt demo [options]``."""
import sys

from contextual_mt.cli import main

if __name__ == "__main__":
    sys.exit(main(["demo", *sys.argv[1:]]))
