from contextual_mt.cli import console

console()
