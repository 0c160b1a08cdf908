"""Secrets the vocabulary of names did not hold (issue 29, the blind corpus's §4 and
§6): a pre-shared key, a password under a name glued to `pass`, a personal access
token, a user:password pair under a credentials variable, an IPsec secrets line,
and a random UUID where the name says token, secret or a credential's key; the
same shapes left alone where the name or the value says something else."""

from __future__ import annotations

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.detection.shape import random_uuid
from testing.tokens import expand

#: Version 4 (random), version 1 (a time and a node), version 5 (a name's digest).
V4 = "{rand:h:8}-{rand:h:4}-4{rand:h:3}-b{rand:h:3}-{rand:h:12}"
V1 = "{rand:h:8}-{rand:h:4}-1{rand:h:3}-8{rand:h:3}-{rand:h:12}"
V5 = "{rand:h:8}-{rand:h:4}-5{rand:h:3}-9{rand:h:3}-{rand:h:12}"


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


def _lines(scanner: Scanner, template: str, path: str = "config/app.txt") -> list[int]:
    text = expand(template, template)
    return [finding.line for finding in scanner.scan(Fragment(path=path, text=text))]


@pytest.mark.parametrize(
    ("template", "line"),
    [
        (f"keycloak:\n  credentials:\n    secret: {V4}\n", 3),
        (f'index = pinecone.init(api_key="{V4}", environment="us-east1-gcp")\n', 1),
        (f"RUN npm config set //registry.npmjs.org/:_authToken {V4}\n", 1),
        (f'env:\n  - name: CLICKSEND_API_KEY\n    value: "{V4}"\n', 3),
        (f'{{"client_secret": "{V4}"}}\n', 1),
        (f"LICENSE_KEY={V4}\n", 1),
        ("ACME_TOKEN=" + expand(V4, "upper").upper() + "\n", 1),
    ],
)
def test_a_random_uuid_under_a_secrets_name_is_found(
    scanner: Scanner, template: str, line: int
) -> None:
    assert line in _lines(scanner, template)


@pytest.mark.parametrize(
    "template",
    [
        # a UUID of another version, or none, under the same names
        f"keycloak:\n  credentials:\n    secret: {V1}\n",
        f'index = pinecone.init(api_key="{V5}")\n',
        f'env:\n  - name: CLICKSEND_API_KEY\n    value: "{V1}"\n',
        '  "acme_api_key": "00000000-0000-0000-0000-000000000000"\n',
        # a random UUID under a name of an identifier
        f"primary_key: {V4}\n",
        f"object_key: {V4}\n",
        f'request_id = "{V4}"\n',
        f"tenant_id: {V4}\n",
        f"auth_user: {V4}\n",
        f"idempotency_key: {V4}\n",
        f"next_page_token: {V4}\n",
        f'key = "{V4}"\n',
    ],
)
def test_other_uuids_and_identifiers_are_no_finding(scanner: Scanner, template: str) -> None:
    assert _lines(scanner, template) == []


def test_only_a_version_4_uuid_is_random() -> None:
    assert random_uuid(expand(V4, "a"))
    assert random_uuid(expand(V4, "b").upper())
    for template in (V1, V5, "{rand:h:8}-{rand:h:4}-4{rand:h:3}-c{rand:h:3}-{rand:h:12}"):
        assert not random_uuid(expand(template, "c"))
    assert not random_uuid("00000000-0000-0000-0000-000000000000")


@pytest.mark.parametrize(
    ("path", "template", "line"),
    [
        (
            "system-connections/Office.nmconnection",
            "[wifi-security]\nkey-mgmt=wpa-psk\npsk=Falcon{rand:0:4}!\n",
            3,
        ),
        ("etc/ipsec.secrets", ': PSK "{rand:Aa0:20}!"\n', 1),
        (
            "home/.gitconfig",
            "[sendemail]\n\tsmtpserver = smtp.example.org\n\tsmtppass = {rand:a0:16}\n",
            3,
        ),
        ("config/app.php", "$config['dbpass'] = '{rand:Aa0:12}';\n", 1),
        ("azure-pipelines.yml", "variables:\n  nugetFeedPat: {rand:a0:52}\n", 2),
        ("Dockerfile", "ENV SIDEKIQ_PRO_CREDENTIALS={rand:h:8}:{rand:h:8}\n", 1),
    ],
)
def test_a_credential_word_the_names_lacked_is_found(
    scanner: Scanner, path: str, template: str, line: int
) -> None:
    assert line in _lines(scanner, template, path)


@pytest.mark.parametrize(
    "template",
    [
        "if args.bypass: pass\n",
        'encompass: "{rand:Aa0:12}"\n',
        "self.renderPass = vk.createRenderPass(device, info)\n",
        '"getpass": "password = getpass()",\n',
        'psk_identity = "client1"\n',
        "unsigned int psk_len = sizeof(psk);\n",
        "psk: ${WIFI_PSK}\n",
        "DOCS_PATH={rand:Aa0:40}\n",
        'pat = re.compile(r"{rand:Aa0:40}")\n',
        "SONAR_PAT={rand:a0:20}\n",
        "AUTH=oauth:v2\n",
        "SIDEKIQ_PRO_CREDENTIALS=${SIDEKIQ_USER}:${SIDEKIQ_PASS}\n",
        ": RSA moonKey.pem\n",
    ],
)
def test_the_same_words_in_other_senses_are_no_finding(scanner: Scanner, template: str) -> None:
    assert _lines(scanner, template) == []
