"""The HTTP client's retries and messages, against the real fake server."""

from __future__ import annotations

import base64
import dataclasses
import email.utils
import sys
import time
import types
from typing import TYPE_CHECKING

import pytest

from spillguard.cli import main
from spillguard.core.errors import SyncError, UsageError
from spillguard.sync.auth import find_credentials
from spillguard.sync.http import Call, ClientSettings, request
from spillguard.sync.messages import describe_http_error
from testing.fake_server import Answer, FakeApp, serve
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator

    from testing.gitrepo import GitRepo

PASSWORD = expand("pw-{rand:Aa0:24}", "http-password")
RULES = Call(method="GET", path="/rest/security/1.0/rules")


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(password=PASSWORD)


@pytest.fixture
def client(app: FakeApp) -> Iterator[ClientSettings]:
    credentials = find_credentials(
        "127.0.0.1",
        bearer=False,
        environ={"SPILLGUARD_USERNAME": "ada", "SPILLGUARD_PASSWORD": PASSWORD},
    )
    with serve(app) as url:
        yield ClientSettings(
            server=url, authorization=credentials.authorization, secrets=credentials.secrets
        )


def test_502_and_503_back_off_exponentially(app: FakeApp, client: ClientSettings) -> None:
    app.then(RULES.path, Answer(503), Answer(502), Answer(503))
    waits: list[float] = []
    assert request(client, RULES, sleep=waits.append).status == 200
    assert waits == [1.0, 2.0, 4.0]


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [("7", 7.0), ("an HTTP date 30 s from now", 30.0)],
)
def test_429_waits_what_retry_after_asks(
    app: FakeApp, client: ClientSettings, retry_after: str, expected: float
) -> None:
    if not retry_after.isdigit():
        retry_after = email.utils.formatdate(time.time() + expected, usegmt=True)
    app.then(RULES.path, Answer(429, headers={"Retry-After": retry_after}))
    waits: list[float] = []
    assert request(client, RULES, sleep=waits.append).status == 200
    assert waits == [pytest.approx(expected, abs=2)]


def test_tries_are_bounded(app: FakeApp, client: ClientSettings) -> None:
    app.then(RULES.path, *[Answer(503)] * 9)
    waits: list[float] = []
    with pytest.raises(SyncError, match="gave up after 4 tries"):
        request(client, RULES, sleep=waits.append)
    assert len(waits) == 3


def test_a_server_echoing_the_password_does_not_show_it(
    app: FakeApp, client: ClientSettings
) -> None:
    app.then(RULES.path, Answer.error(400, "Bad credentials", f"you sent {PASSWORD}"))
    with pytest.raises(SyncError) as caught:
        request(client, RULES)
    assert PASSWORD not in str(caught.value)
    assert "you sent ****" in str(caught.value)


def test_credentials_never_show_in_a_repr() -> None:
    credentials = find_credentials(
        "h", bearer=False, environ={"SPILLGUARD_USERNAME": "ada", "SPILLGUARD_PASSWORD": PASSWORD}
    )
    settings = ClientSettings(server="https://h", authorization=credentials.authorization)
    assert PASSWORD not in repr(credentials) + repr(settings)
    assert credentials.authorization not in repr(credentials) + repr(settings)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"restErrorTitle": "Nope"}', "GET /x: HTTP 404 Not Found: Nope"),
        (
            b'{"restErrorTitle": "Invalid", "violations": [{"fieldName": "f", "message": "m"}]}',
            "GET /x: HTTP 404 Not Found: Invalid; f: m",
        ),
        (
            b"<p>Not \x1b[31mhere</p>",
            "GET /x: HTTP 404 Not Found: (no error body) Not \\x1b[31mhere",
        ),
        (b"", "GET /x: HTTP 404 Not Found: (no error body)"),
        (
            b'{"errors": [{"context": null, "message": "Repository app does not exist."}]}',
            "GET /x: HTTP 404 Not Found: Repository app does not exist.",
        ),
        (
            b'{"status": 404, "message": "No such space"}',
            "GET /x: HTTP 404 Not Found: No such space",
        ),
        (
            b'{"restErrorTitle": "Bad", "violations": [{"fieldName": null, "message": null}]}',
            "GET /x: HTTP 404 Not Found: Bad; ?:",
        ),
        # Nested past any parser's stack (it was an internal RecursionError): an excerpt.
        (b"[" * 60_000, "GET /x: HTTP 404 Not Found: (no error body) " + "[" * 117 + "..."),
    ],
)
def test_error_messages(body: bytes, expected: str) -> None:
    message = describe_http_error(
        status=404,
        reason="Not Found",
        body=body,
        where="GET /x",
        permission="",
        auth_hint="",
        xsrf_header=None,
        location=None,
        secrets=(),
    )
    assert message == expected


def test_a_password_with_a_line_break_is_refused_without_showing_it() -> None:
    with pytest.raises(UsageError) as caught:
        find_credentials(
            "h",
            bearer=False,
            environ={"SPILLGUARD_USERNAME": "ada", "SPILLGUARD_PASSWORD": PASSWORD + "\r\nX: y"},
        )
    assert PASSWORD not in str(caught.value)
    assert "SPILLGUARD_USERNAME/SPILLGUARD_PASSWORD contain a control character" in str(
        caught.value
    )


@pytest.fixture
def keyring_store(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str | None], tuple]:
    """The keyring package's public API (get_credential, errors.KeyringError) over a dict.

    keyring is optional and not installed for the tests; this stands in for it the
    way a keyring backend would, and leaves sys.modules as it found it.
    """
    store: dict[tuple[str, str | None], tuple] = {}
    errors = types.ModuleType("keyring.errors")
    errors.KeyringError = type("KeyringError", (Exception,), {})  # type: ignore[attr-defined]
    keyring = types.ModuleType("keyring")

    def get_credential(service: str, username: str | None) -> object:
        found = store.get((service, username))
        if found == ("locked",):
            raise errors.KeyringError("the keyring is locked")  # type: ignore[attr-defined]
        return (
            None if found is None else types.SimpleNamespace(username=found[0], password=found[1])
        )

    keyring.get_credential = get_credential  # type: ignore[attr-defined]
    keyring.errors = errors  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keyring", keyring)
    monkeypatch.setitem(sys.modules, "keyring.errors", errors)
    return store


def test_credentials_from_the_keyring(keyring_store, tmp_path) -> None:
    environ = {"NETRC": str(tmp_path / "absent")}
    keyring_store[("spillguard:h", None)] = ("ada", PASSWORD)
    keyring_store[("spillguard:h", "api-key")] = ("api-key", PASSWORD[::-1])
    basic = find_credentials("h", bearer=False, environ=environ)
    assert basic.origin == "the system keyring (service spillguard:h) (user ada)"
    assert basic.authorization == "Basic " + base64.b64encode(f"ada:{PASSWORD}".encode()).decode()
    bearer = find_credentials("h", bearer=True, environ=environ)
    assert bearer.authorization == f"Bearer {PASSWORD[::-1]}"


def test_a_locked_keyring_is_no_credentials(keyring_store, tmp_path) -> None:
    keyring_store[("spillguard:h", None)] = ("locked",)
    with pytest.raises(UsageError, match="no credentials for h"):
        find_credentials("h", bearer=False, environ={"NETRC": str(tmp_path / "absent")})


#: A password with two spaces in a row: collapsing blank space first would turn it
#: into one that scrubbing no longer finds.
SPACED = expand("pw{rand:Aa0:10}  {rand:Aa0:10}", "spaced-password")


def fragments(secret: str, size: int = 6) -> set[str]:
    """Every run of ``size`` characters of ``secret``: none may reach the user."""
    return {secret[start : start + size] for start in range(len(secret) - size + 1)}


#: The Basic token the client sends for SPACED (base64 of "ada:" and the password).
SPACED_TOKEN = base64.b64encode(f"ada:{SPACED}".encode()).decode()
#: Every run of 6 characters of the password, of it collapsed, and of the token.
SPACED_PARTS = fragments(SPACED) | fragments(" ".join(SPACED.split())) | fragments(SPACED_TOKEN)


def echoes(token: str) -> Iterator[tuple[str, Answer]]:
    """Bodies that give the credentials back, near where messages are cut: a proxy's
    page echoing the request's Authorization header, the app's error body quoting the
    password, and a redirect to a URL holding it."""
    for pad in range(60, 130, 7):  # the 120-character excerpt is cut inside the header
        page = f"<html><h1>Bad Gateway</h1><p>{'x' * pad} Authorization: Basic {token}</p>"
        yield f"proxy page {pad}", Answer(500, page.encode(), {"Content-Type": "text/html"})
    for pad in range(360, 420, 9):  # the 400-character detail is cut inside the password
        body = Answer.error(400, "Bad credentials", f"{'y' * pad} you sent {SPACED} twice")
        yield f"error body {pad}", body
    yield "app page", Answer(400, f"<p>password:&nbsp;{SPACED}</p>".encode())
    location = f"https://sso.example/login?u=ada&p={SPACED}&{'z' * 60}"
    yield "redirect", Answer(302, b"", {"Location": location})


def test_credentials_are_scrubbed_before_any_message_is_collapsed_or_cut(app: FakeApp) -> None:
    app.password = SPACED
    credentials = find_credentials(
        "127.0.0.1",
        bearer=False,
        environ={"SPILLGUARD_USERNAME": "ada", "SPILLGUARD_PASSWORD": SPACED},
    )
    with serve(app) as url:
        client = ClientSettings(
            server=url,
            authorization=credentials.authorization,
            secrets=credentials.secrets,
            max_tries=1,
        )
        for name, answer in echoes(SPACED_TOKEN):
            app.then(RULES.path, answer)
            with pytest.raises(SyncError) as caught:
                request(client, RULES)
            shown = str(caught.value)
            assert not {part for part in SPACED_PARTS if part in shown}, (name, shown)
            assert "HTTP " in shown, (name, shown)


@pytest.fixture
def spaced_sync(
    work: GitRepo, app: FakeApp, url: str, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """``spillguard sync`` against the app, with SPACED as the password."""
    app.password = SPACED
    monkeypatch.setenv("SPILLGUARD_PASSWORD", SPACED)
    return ["sync", "--server", url, "--project", "PRJ", "--repo", "app"]


def test_sync_prints_no_part_of_the_credentials(
    app: FakeApp, spaced_sync: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The same answers, through ``spillguard sync`` to its one line on stderr."""
    for name, answer in echoes(SPACED_TOKEN):
        app.then(RULES.path, answer)
        assert main(spaced_sync) == 3, name
        err = capsys.readouterr().err
        assert err.startswith("spillguard: error: GET /rest/security/1.0/rules: HTTP "), err
        assert not {part for part in SPACED_PARTS if part in err}, (name, err)


def test_an_export_page_echoing_the_header_shows_no_part_of_it(
    app: FakeApp, spaced_sync: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A proxy's page served as the reviewed export (200): its first line is shown as
    the CSV's columns, cut at 200 characters, after the credentials are out."""
    for pad in range(150, 200, 9):
        app.export_override = f"{'x' * pad} Authorization: Basic {SPACED_TOKEN}\n1\n".encode()
        assert main(spaced_sync) == 3
        err = capsys.readouterr().err
        assert "no matchText column" in err, err
        assert not {part for part in SPACED_PARTS if part in err}, (pad, err)


def test_a_server_that_drips_its_answer_is_cut_at_the_deadline(
    app: FakeApp, client: ClientSettings
) -> None:
    """A byte every 50 ms never trips a read's timeout; the whole exchange has one."""
    from testing.fake_server import JSON_TYPE

    app.then(RULES.path, Answer(200, b"[]" + b" " * 400, {"Content-Type": JSON_TYPE}, drip=0.05))
    settings = dataclasses.replace(client, timeout=1.0)
    with pytest.raises(
        SyncError, match=r"^GET /rest/security/1.0/rules: no complete answer within 1 s$"
    ):
        request(settings, RULES)


#: A password that every escaping changes: a slash, a plus, a quote, an accent, an ampersand.
SPECIAL = expand('pw/{rand:Aa0:10}+"é&{rand:Aa0:10}', "special-password")
SPECIAL_TOKEN = base64.b64encode(f"ada:{SPECIAL}".encode()).decode()


def other_forms(secret: str, token: str) -> dict[str, str]:
    """The credentials as a server may echo them in another form than they were sent."""
    import json
    from urllib.parse import quote

    wrapped = "\n".join(token[start : start + 8] for start in range(0, len(token), 8))
    return {
        "percent-encoded": quote(secret, safe=""),
        "JSON-escaped": json.dumps(secret),
        "JSON-escaped, slashes too": json.dumps(secret).replace("/", "\\/"),
        "upper-cased": secret.upper(),
        "upper-cased, percent-encoded": quote(secret, safe="").upper(),
        "the header, wrapped": f"Authorization: Basic {wrapped}",
        "the token, wrapped": wrapped,
        "the password in base64": base64.b64encode(secret.encode()).decode(),
        "the password in base64 with spaces": " ".join(base64.b64encode(secret.encode()).decode()),
    }


@pytest.mark.parametrize("form", list(other_forms(SPECIAL, SPECIAL_TOKEN)))
def test_credentials_echoed_in_another_form_are_scrubbed_too(app: FakeApp, form: str) -> None:
    """docs/sync.md: no part of a credential reaches the terminal, however it comes back."""
    app.password = SPECIAL
    credentials = find_credentials(
        "127.0.0.1", bearer=False,
        environ={"SPILLGUARD_USERNAME": "ada", "SPILLGUARD_PASSWORD": SPECIAL},
    )  # fmt: skip
    echoed = other_forms(SPECIAL, SPECIAL_TOKEN)[form]
    with serve(app) as url:
        client = ClientSettings(server=url, authorization=credentials.authorization,
                                secrets=credentials.secrets, max_tries=1)  # fmt: skip
        app.then(RULES.path, Answer(502, f"you sent {echoed}".encode()))
        with pytest.raises(SyncError) as caught:
            request(client, RULES)
        app.then(RULES.path, Answer(400, f"<p>you sent {echoed}</p>".encode()))
        with pytest.raises(SyncError) as cut:
            request(client, RULES)
    for shown in (str(caught.value), str(cut.value)):
        assert "you sent " in shown, shown
        assert "****" in shown, shown
        secret = echoed.removeprefix("Authorization: Basic ").replace("\n", "")
        leaked = {part for part in fragments(secret) if part in shown}
        assert not leaked, shown
