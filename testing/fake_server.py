"""A real HTTP(S) server on 127.0.0.1 speaking the scanning app's documented REST API.

One ``FakeApp`` per test holds the server's state (rules, reviewed lines) and a
script of misbehaviour (error bodies, 429, 503, slow answers, odd exports) served
before the normal answer of a path. Every request is recorded.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import io
import json
import re
import subprocess
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SECURITY = "/rest/security/latest"


@dataclasses.dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Seconds to wait before answering (a slow server); the server's shutdown ends it.
    delay: float = 0.0

    @classmethod
    def error(cls, status: int, title: str, description: str = "", **violations: str) -> Answer:
        body: dict[str, Any] = {"restErrorTitle": title}
        if description:
            body["restErrorDescription"] = description
        if violations:
            body["violations"] = [{"fieldName": k, "message": v} for k, v in violations.items()]
        return cls(status, json.dumps(body).encode(), {"Content-Type": "application/json"})


@dataclasses.dataclass
class FakeApp:
    variant: str = "code-hosting"
    #: "latest" sends ``blocking`` and ``ruleName``; "older" sends neither.
    release: str = "latest"
    username: str = "ada"
    password: str = ""
    api_key: str = ""
    xsrf_header: str = "X-Host-Token"
    rules: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    repository_rules: list[str] = dataclasses.field(default_factory=list)
    #: The server's reviewed lines: (matchText, ruleName).
    reviewed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: Raw bytes served instead of the generated reviewed export (zip, malformed CSV).
    export_override: bytes | None = None
    password_settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    script: dict[str, list[Answer]] = dataclasses.field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str]]] = dataclasses.field(default_factory=list)
    #: Reviewed-line operations as received: ("create" or "delete", JSON body).
    posted: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)

    def then(self, path: str, *answers: Answer) -> None:
        """Serve ``answers`` for the next requests to ``path`` (without query), in order."""
        self.script.setdefault(path, []).extend(answers)

    def export_csv(self) -> bytes:
        out = io.StringIO()
        with_rule = self.release == "latest"
        header = ["id", "matchText", *(["ruleName"] if with_rule else []), "reviewedBy"]
        out.write(",".join(header) + "\r\n")
        for number, (text, rule) in enumerate(self.reviewed, start=1):
            quoted = '"' + text.replace('"', '""') + '"'
            out.write(",".join([str(number), quoted, *([rule] if with_rule else []), "ada"]))
            out.write("\r\n")
        return out.getvalue().encode()


def zip_of(entries: dict[str, bytes]) -> bytes:
    """A zip archive held in memory; entry names are used as given (``../`` included)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        app = self.server.app
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        app.requests.append((self.command, self.path, dict(self.headers.items())))
        script = app.script.get(path)
        answer = script.pop(0) if script else None
        if answer is not None and answer.delay:
            app.stop.wait(answer.delay)
        if answer is None or answer.status == 0:
            answer = self._refused() or _route(app, self.command, path, body)
        self._send(answer)

    def _refused(self) -> Answer | None:
        app = self.server.app
        given = self.headers.get("Authorization", "")
        if app.variant == "hosted":
            if given != f"Bearer {app.api_key}":
                return Answer.error(401, "Unauthorized", "The API key is not valid")
            return None
        pair = f"{app.username}:{app.password}".encode()
        if given != "Basic " + base64.b64encode(pair).decode():
            return Answer.error(401, "Unauthorized", "Authentication failed")
        if self.headers.get(app.xsrf_header) != "no-check":
            return Answer(403, b"XSRF check failed", {"Content-Type": "text/plain"})
        return None

    def _send(self, answer: Answer) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(answer.body)


def _json(value: Any) -> Answer:
    return Answer(200, json.dumps(value).encode(), {"Content-Type": "application/json"})


def _rules_answer(app: FakeApp) -> Answer:
    rules = [dict(rule) for rule in app.rules]
    if app.release != "latest":
        for rule in rules:
            rule.pop("blocking", None)
    return _json(rules)


def _export_answer(app: FakeApp) -> Answer:
    body = app.export_override if app.export_override is not None else app.export_csv()
    kind = "application/zip" if body.startswith(b"PK") else "text/csv"
    return Answer(200, body, {"Content-Type": kind})


def _review(app: FakeApp, action: str, body: bytes) -> Answer:
    data = json.loads(body or b"{}")
    app.posted.append((action, data))
    if app.variant == "code-hosting" and app.release != "latest" and "ruleName" in data:
        return Answer.error(400, "Bad Request", "Unrecognized field", ruleName="unknown field")
    if not data.get("matchText"):
        return Answer.error(400, "Bad Request", matchText="must not be empty")
    if action == "create":
        app.reviewed.append((data["matchText"], data.get("ruleName", "")))
    else:
        app.reviewed = [entry for entry in app.reviewed if entry[0] != data["matchText"]]
    return Answer(204)


_PATHS = {
    "code-hosting": {
        "rules": r"/rest/security/1\.0/rules",
        "repository_rules": r"/rest/security/1\.0/scan/[^/]+/rule_types/[^/]+",
        "export": SECURITY + r"/export/reviewed/projects/[^/]+/repos/[^/]+",
        "review": SECURITY + r"/review-lines/projects/[^/]+/repos/[^/]+/(create|delete)",
    },
    "wiki": {
        "rules": SECURITY + "/rules",
        "export": SECURITY + r"/export/reviewed/space/[^/]+/findings",
        "review": SECURITY + r"/review/space/[^/]+/(create|delete)",
    },
    "issue-tracker": {
        "rules": SECURITY + "/rules",
        "export": SECURITY + r"/export/reviewed/project/[^/]+/findings",
        "review": SECURITY + r"/review/project/[^/]+/(create|delete)",
    },
    "hosted": {
        "rules": "/rest/rules",
        "settings": "/rest/rules/generic-password-settings",
    },
}


def _route(app: FakeApp, method: str, path: str, body: bytes) -> Answer:
    for name, pattern in _PATHS[app.variant].items():
        match = re.fullmatch(pattern, path)
        if match is None or (method == "POST") != (name == "review"):
            continue
        if name == "review":
            return _review(app, match.group(1), body)
        answers = {
            "rules": lambda: _rules_answer(app),
            "repository_rules": lambda: _json(app.repository_rules),
            "export": lambda: _export_answer(app),
            "settings": lambda: _json(app.password_settings),
        }
        return answers[name]()
    return Answer.error(404, "Not Found", f"No resource at {path}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, app: FakeApp) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.app = app


def self_signed_cert(folder: Path) -> tuple[Path, Path]:
    """(CA bundle for the client, certificate chain and key for the server) for 127.0.0.1.

    Made at test time: with trustme when it is installed, else with the openssl CLI
    (a self-signed certificate is its own CA bundle).
    """
    chain = folder / "server.pem"
    try:
        import trustme  # type: ignore[import-not-found]
    except ImportError:
        key, cert = folder / "key.pem", folder / "cert.pem"
        command = [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ]
        command += ["-keyout", str(key), "-out", str(cert)]
        subprocess.run(command, check=True, capture_output=True)
        chain.write_bytes(key.read_bytes() + cert.read_bytes())
        return cert, chain
    ca = trustme.CA()
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(chain))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    return folder / "ca.pem", chain


@contextlib.contextmanager
def serve(app: FakeApp, *, tls_folder: Path | None = None) -> Iterator[str]:
    """Run the app's server until the block ends; yields its base URL."""
    server = _Server(app)
    scheme = "http"
    if tls_folder is not None:
        import ssl

        _, chain = self_signed_cert(tls_folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        app.stop.set()
        server.shutdown()
        server.server_close()
        thread.join()
