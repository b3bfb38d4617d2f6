"""MuDA: tagging and evaluation of discourse phenomena (issues 5 and 6; not implemented yet)."""
