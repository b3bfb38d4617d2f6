"""Reading text files with clear errors; writing outputs atomically (one implementation, in muda.io)."""
from muda.io import atomic_write_lines, atomic_write_text, read_lines

__all__ = ["atomic_write_lines", "atomic_write_text", "read_lines"]
