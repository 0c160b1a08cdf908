"""A generated corpus of realistic files with secrets and hard near-misses, by family.

``bench/recall.py`` runs the built-in rules over it and prints recall and the share
of near-misses flagged. A family is a function of a seed that yields ``Case``s; add
one to ``FAMILIES`` (see ``families.py``). Provider families need no code: every
rule of ``builtin.toml`` and ``services.toml`` brings its ``tp`` examples, placed in
files of several formats (``providers.py``).
"""
