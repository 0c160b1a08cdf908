"""``spillguard audit``: a whole estate of repositories, incrementally, on one machine or more."""
