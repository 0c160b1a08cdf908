"""Credentials handed over by position or on a command line (issue 29, the blind
corpus's §1 and §5): found where no name stands beside them, over continuation lines
too, and left alone where the call takes data."""

from __future__ import annotations

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from spillguard.detection.shape import client_argument
from testing.tokens import expand


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


def _found(scanner: Scanner, template: str, path: str = "src/app.txt") -> list[tuple[str, int]]:
    text = expand(template, template)
    return [(f.rule, f.line) for f in scanner.scan(Fragment(path=path, text=text))]


@pytest.mark.parametrize(
    ("template", "rule", "line"),
    [
        # the arguments on the line after the call: the finding is on the value's line
        (
            (
                'gw = new BraintreeGateway(\n    Environment.PRODUCTION, "{rand:a0:16}",'
                ' "{rand:a0:16}", "{rand:h:32}");\n'
            ),
            "GENERIC_CLIENT_ARGUMENT_WRAPPED",
            2,
        ),
        (
            (
                'Connection c = DriverManager.getConnection(\n    "jdbc:mysql://db:3306/crm",'
                ' "crm_app", "Falcon{rand:0:4}!");\n'
            ),
            "PASSWORD_BY_POSITION",
            2,
        ),
        (
            'client = wolframalpha.Client("{rand:A0:6}-{rand:A0:10}")\n',
            "GENERIC_CLIENT_ARGUMENT",
            1,
        ),
        (
            'ok = keyring.set_password("billing", "ops@example.org", "{rand:Aa0:40}")\n',
            "GENERIC_CLIENT_ARGUMENT",
            1,
        ),
        ("cy.get('#password').type('Falcon{rand:0:4}!')\n", "PASSWORD_FIELD_FILLED", 1),
        ("mongo --host db1 -u admin -p Falcon{rand:0:4}!\n", "CLI_PASSWORD_OPTION", 1),
    ],
)
def test_a_credential_by_position_is_found_on_its_line(
    scanner: Scanner, template: str, rule: str, line: int
) -> None:
    assert (rule, line) in _found(scanner, template)


@pytest.mark.parametrize(
    "template",
    [
        'expected = sha256("{rand:Aa0:40}")\n',
        'self.assertEqual(client.token, "{rand:Aa0:40}")\n',
        'addr = new Address("0x{rand:h:40}")\n',
        'repo.checkout("{rand:h:40}")\n',
        'kp = new PublicKey("{rand:B58:44}")\n',
        'session = client.get("{rand:Aa0:40}")\n',
        'u = uuid.UUID("{rand:h:32}")\n',
        'c = Client("{rand:h:8}-{rand:h:4}-4{rand:h:3}-a{rand:h:3}-{rand:h:12}")\n',
        # hex shorter than a key (a public app key, an object id), a revision, a fixture
        'pusher = new Pusher("{rand:h:20}", {{ cluster: "eu" }})\n',
        'repo = git.init("{rand:h:40}")\n',
        'user = UserFixture.create("{rand:Aa0:24}")\n',
        # a port mapping after -p is no password
        "docker run --rm -u 1000:1000 -p 127.0.0.1:8080:80/tcp nginx\n",
    ],
)
def test_a_call_that_takes_data_is_no_finding(scanner: Scanner, template: str) -> None:
    assert _found(scanner, template) == []


@pytest.mark.parametrize(
    ("callee", "message", "told"),
    [
        ("acme.Client", False, True),
        ("Client::new", False, True),
        ("pricefeed.New", False, True),
        ("new Shipengine", False, True),
        ("SearchClient.create", False, True),
        ("Flurry startSession", True, True),
        ("Flurry logEvent", True, False),
        ("client.get", False, False),
        ("new ObjectId", False, False),
        ("Digest::SHA256.new", False, False),
        ("init", False, False),
    ],
)
def test_which_calls_take_a_credential_by_position(callee: str, message: bool, told: bool) -> None:
    token = expand("{rand:Aa0:40}", callee)
    line = f'{callee}("{token}")'
    start = line.index(token)
    verdict = client_argument(line, (0, len(callee)), (start, start + len(token)), message=message)
    assert verdict is told
