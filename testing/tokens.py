"""Token-shaped test data generated at test time, so the repository holds no credential.

A template's ``{rand:CHARSET:N}`` becomes N random characters of CHARSET.
"""

from __future__ import annotations

import random
import string

import regex

from spillguard.detection.checksums import base62_crc32

CHARSETS = {
    "A": string.ascii_uppercase,
    "a": string.ascii_lowercase,
    "0": string.digits,
    "Aa": string.ascii_letters,
    "Aa0": string.ascii_letters + string.digits,
    "A0": string.ascii_uppercase + string.digits,
    "a0": string.ascii_lowercase + string.digits,
    "A2": string.ascii_uppercase + "234567",
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64u": string.ascii_letters + string.digits + "-_",
    "Aa0_": string.ascii_letters + string.digits + "_",
    "Aa0-": string.ascii_letters + string.digits + "-",
    "Aa0_-": string.ascii_letters + string.digits + "_-",
    "a0_-": string.ascii_lowercase + string.digits + "_-",
    # bech32, as in age keys
    "B32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    # base58 (Bitcoin's: no 0, O, I or l), as in extended keys and Storj grants
    "B58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
}
_TEMPLATE = regex.compile(r"\{rand:([^:}]+):(\d+)\}")
_CRC32 = regex.compile(r"([A-Za-z0-9]+)\{crc32\}")


def random_token(charset: str, length: int, rng: random.Random) -> str:
    """``length`` characters of ``charset``, with at least one of each kind it offers.

    Mixing kinds keeps generated tokens above any entropy floor a rule sets.
    """
    alphabet = CHARSETS[charset]
    while True:
        token = "".join(rng.choice(alphabet) for _ in range(length))
        kinds = [set(token) & set(group) for group in _groups(alphabet)]
        if length < 8 or all(kinds):
            return token


def _groups(alphabet: str) -> list[str]:
    groups = [string.ascii_uppercase, string.ascii_lowercase, string.digits]
    return [group for group in groups if set(group) & set(alphabet)]


def expand(template: str, seed: int | str = 0) -> str:
    """``template`` with every ``{rand:CHARSET:N}`` filled in, reproducibly for a seed,
    then every ``{crc32}`` replaced by the checksum GitHub and npm tokens end in: the
    base62 CRC32 of the letters and digits just before it (``ghp_{rand:Aa0:30}{crc32}``)."""
    rng = random.Random(str(seed))
    text = _TEMPLATE.sub(lambda m: random_token(m.group(1), int(m.group(2)), rng), template)
    return _CRC32.sub(lambda m: m.group(1) + base62_crc32(m.group(1)), text)
