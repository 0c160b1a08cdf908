from __future__ import annotations

import pytest

from spillguard.detection.redact import fixed_mask, mask, mask_match


@pytest.mark.parametrize(
    ("secret", "masked", "fixed"),
    [
        ("AKIAABCDEFGHIJKLMNOP", "AKIA****************", "AKIA********"),
        ("ghp_" + "x" * 36, "ghp_" + "*" * 36, "ghp_********"),
        # an AWS secret key, a password: not one character shown
        ("wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEYz", "*" * 40, "********"),
        ("hunter22", "********", "********"),
        ("AKIA1234", "********", "********"),  # a marker without a token's body is not one
        ("abc", "***", "********"),
        ("", "", "********"),
    ],
)
def test_only_a_known_marker_stays_readable(secret: str, masked: str, fixed: str) -> None:
    assert mask(secret) == masked
    assert fixed_mask(secret) == fixed


def test_mask_match_hides_only_the_secret_part() -> None:
    match = 'password = "s3cr3tvalue1"'
    start = match.index('"') + 1
    shown = mask_match(match, start, len(match) - 1)
    assert shown == 'password = "************"'

    assert len(shown) == len(match)
