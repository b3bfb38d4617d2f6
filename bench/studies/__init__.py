"""Studies and one-off experiments (issue-specific measurements, agreement checks against other
tools, structural figures), each runnable as ``python -m bench.studies.NAME`` from the repository
root; their figures and the commands that made them are in bench/RESULTS.md."""
