"""``spillguard sync``: the scanning app's REST API (four variants), credentials and cache."""
