"""The shape of a generated value, and the contexts that say a value is a digest."""

from __future__ import annotations

import random
import string

import pytest

from spillguard.detection.shape import in_hash_context, looks_generated
from testing.tokens import expand

ALPHABETS = {
    "hex": "0123456789abcdef",
    "base62": string.ascii_letters + string.digits,
    "base64url": string.ascii_letters + string.digits + "-_",
    "lowercase and digits": string.ascii_lowercase + string.digits,
}


@pytest.mark.parametrize("alphabet", ALPHABETS.values(), ids=ALPHABETS.keys())
@pytest.mark.parametrize("length", [20, 32, 40, 64])
def test_random_values_of_every_alphabet_look_generated(alphabet: str, length: int) -> None:
    """Nine in ten random values or more of every alphabet and length pass (short
    base64url loses those without a digit; none is lost to a word by chance)."""
    rng = random.Random(f"{alphabet}-{length}")  # noqa: S311 - test data
    values = ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(500)]
    assert sum(map(looks_generated, values)) >= 0.9 * len(values)


@pytest.mark.parametrize(
    "value",
    [
        "user_profile_cache_value_v2",  # words
        "homepageTitleWelcome2",  # camel case words
        "settings.account.apiTokens.title",  # an i18n key
        "PKCS12_key_gen_utf8",  # a C identifier of short parts
        "gnutls_x509_crt_get_key",
        "xmlSecGnuTLSX509CertGetKey",
        "cofactorDH-sha224kdf-scheme",
        "aaaaaaaaaaaaaaaaaaaa1",  # typed
        "deadbeefdeadbeefdeadbeef",
        "12345678901234567890",  # a number
        "dGhlIHNhbXBsZSBub25jZQ==",  # base64 of 16 bytes: a nonce, not a key
        "{rand:b64:40}==",  # padding no encoder writes
        "{rand:a:40}",  # letters alone
        "{rand:h:8}-{rand:h:4}-{rand:h:4}-{rand:h:4}-{rand:h:12}",  # a UUID, by default
        "1.2.3.4.5.6.7.8.9",
    ],
)
def test_values_a_person_wrote_do_not(value: str) -> None:
    assert not looks_generated(expand(value, value))


def test_a_uuid_looks_generated_only_where_its_name_allows_it() -> None:
    value = expand("{rand:h:8}-{rand:h:4}-4{rand:h:3}-a{rand:h:3}-{rand:h:12}", "uuid")
    assert looks_generated(value, uuid_allowed=True)
    assert not looks_generated(value)


@pytest.mark.parametrize(
    "line",
    [
        "pip/__init__.py,sha256=qaN-fw_{rand:Aa0:36},357",
        '  "integrity": "sha512-{rand:b64:40}/abc{rand:Aa0:30}=="',
        "golang.org/x/text v0.14.0 h1:{rand:b64:12}+{rand:Aa0:26}=",
        'checksum = "{rand:h:64}"',
        "FROM python@sha256:{rand:h:64}",
    ],
)
def test_a_value_in_a_labelled_digest_is_in_a_hash_context(line: str) -> None:
    text = expand(line, line)
    start = len(text) - 30
    assert in_hash_context(text, start)


@pytest.mark.parametrize(
    "line", ["ACME_KEY={rand:h:64}", "token = '{rand:Aa0:40}'", "sha = other; key={rand:h:32}"]
)
def test_a_named_value_is_not(line: str) -> None:
    text = expand(line, line)
    assert not in_hash_context(text, len(text) - 20)
