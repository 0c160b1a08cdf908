from __future__ import annotations

import pytest

from spillguard.redact import mask, mask_match


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        ("AKIAABCDEFGHIJKLMNOP", "AKIA****************"),
        ("hunter22", "h*******"),
        ("abc", "***"),
        ("", ""),
    ],
)
def test_mask_keeps_length_and_at_most_a_short_prefix(secret: str, masked: str) -> None:
    assert mask(secret) == masked


def test_mask_match_hides_only_the_secret_part() -> None:
    match = 'password = "s3cr3tvalue1"'
    start = match.index('"') + 1
    shown = mask_match(match, start, len(match) - 1)
    assert shown.startswith('password = "s3')
    assert "cr3tvalue1" not in shown
    assert len(shown) == len(match)
