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
#: What the servers send: the media type with a charset parameter, as JAX-RS and Spring do.
JSON_TYPE = "application/json;charset=UTF-8"
CSV_TYPE = "text/csv;charset=UTF-8"


@dataclasses.dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Seconds to wait before answering (a slow server); the server's shutdown ends it.
    delay: float = 0.0
    #: Seconds between the bytes of the whole answer (status line, headers, body): a
    #: server that drips, never idle long enough for a read's timeout.
    drip: float = 0.0
    #: How the body is delimited: "length" (Content-Length), "keep-alive" (HTTP/1.1,
    #: Content-Length, the connection left open whatever the client asked), "chunked"
    #: (HTTP/1.1 chunked transfer encoding) or "close" (HTTP/1.0: the body ends when the
    #: connection closes). All are legitimate for any server.
    framing: str = "length"

    @classmethod
    def error(cls, status: int, title: str, description: str = "", **violations: str) -> Answer:
        body: dict[str, Any] = {"restErrorTitle": title}
        if description:
            body["restErrorDescription"] = description
        if violations:
            body["violations"] = [{"fieldName": k, "message": v} for k, v in violations.items()]
        return cls(status, json.dumps(body).encode(), {"Content-Type": JSON_TYPE})


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
    #: Rows of the wider reviewed exports (a project's, every one): column -> value,
    #: the scope's columns (``WIDER_COLUMNS``) with matchText and ruleName.
    reviewed_elsewhere: list[dict[str, str]] = dataclasses.field(default_factory=list)
    #: The wider exports' columns, when not the variant's ``WIDER_COLUMNS``.
    wider_columns: list[str] | None = None
    password_settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: Lists as plain JSON arrays (""), or paged: "start" (start/limit, ``values``,
    #: ``isLastPage``, ``nextPageStart``) or "page" (page/size, ``content``, ``last``).
    paging: str = ""
    page_size: int = 2
    #: A create's ruleName must name one of the server's rules, as the server spells it.
    check_rule_names: bool = False
    #: How every answer's body is delimited unless the answer says otherwise.
    framing: str = "length"
    #: The server's own scan results by branch name (invalidLines items, see
    #: ``invalid_line``); a branch not here has none (``scanned`` false). "latest"
    #: pages them with start/limit (100 by default), "older" sends them all at once.
    scans: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    default_branch: str = "main"
    #: Whether each result is for its branch's latest commit.
    scans_actual: bool = True
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


def invalid_line(line: str, match: str) -> dict[str, Any]:
    """A finding as the server's Java reports it: offsets in UTF-16 code units."""
    before = line[: line.index(match)]
    start = len(before.encode("utf-16-le")) // 2
    end = start + len(match.encode("utf-16-le")) // 2
    return {"text": line, "lineOffsetStart": start, "lineOffsetEnd": end, "truncated": False}


#: The columns of the wider reviewed exports by variant (not shown by the documents).
WIDER_COLUMNS = {
    "code-hosting": ["project", "repository", "matchText", "ruleName"],
    "wiki": ["space", "matchText", "ruleName"],
    "issue-tracker": ["project", "matchText", "ruleName"],
}


def _csv(columns: list[str], rows: list[dict[str, str]]) -> bytes:
    import csv

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows([row.get(column, "") for column in columns] for row in rows)
    return out.getvalue().encode()


def _wider_answer(app: FakeApp, path: str) -> Answer:
    columns = app.wider_columns or WIDER_COLUMNS[app.variant]
    rows = app.reviewed_elsewhere
    project = re.fullmatch(SECURITY + r"/export/reviewed/projects/([^/]+)", path)
    if project is not None:
        rows = [row for row in rows if row.get("project") == project.group(1)]
        return Answer(200, _csv(columns, rows), {"Content-Type": CSV_TYPE})
    if app.variant == "code-hosting":  # every repository's: a zip
        body = zip_of({"reviewed.csv": _csv(columns, rows)})
        return Answer(200, body, {"Content-Type": "application/zip"})
    return Answer(200, _csv(columns, rows), {"Content-Type": CSV_TYPE})


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

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
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
            answer = self._refused() or _route(app, self.command, self.path, body, self.headers)
        if answer.framing == "length":
            answer = dataclasses.replace(answer, framing=app.framing)
        produced = answer.headers.get("Content-Type", JSON_TYPE)
        if answer.status < 300 and not _accepts(str(self.headers.get("Accept") or ""), produced):
            answer = Answer.error(406, "Not Acceptable", f"This resource produces {produced}")
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
        if answer.drip:
            self._drip(answer)
            return
        if answer.framing in ("chunked", "keep-alive"):
            self.protocol_version = "HTTP/1.1"
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.framing in ("length", "keep-alive"):
            self.send_header("Content-Length", str(len(answer.body)))
        if answer.framing == "keep-alive":
            self.send_header("Connection", "keep-alive")
        elif answer.framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
        self.end_headers()
        with contextlib.suppress(OSError):
            if answer.framing != "chunked":
                self.wfile.write(answer.body)
                return
            for start in range(0, len(answer.body), 7):
                piece = answer.body[start : start + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")

    def _drip(self, answer: Answer) -> None:
        head = f"HTTP/1.0 {answer.status} Dripping\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in answer.headers.items()
        )
        data = f"{head}Content-Length: {len(answer.body)}\r\n\r\n".encode() + answer.body
        with contextlib.suppress(OSError):
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                if self.server.app.stop.wait(answer.drip):
                    return


def _json(value: Any) -> Answer:
    return Answer(200, json.dumps(value).encode(), {"Content-Type": JSON_TYPE})


def _list(app: FakeApp, items: list[Any], query: dict[str, list[str]]) -> Answer:
    if not app.paging:
        return _json(items)
    size = int(query.get("limit", query.get("size", [str(app.page_size)]))[0])
    if app.paging == "start":
        start = int(query.get("start", ["0"])[0])
        page = items[start : start + size]
        last = start + size >= len(items)
        envelope = {"size": len(page), "limit": size, "start": start, "values": page}
        return _json(
            {**envelope, "isLastPage": last, **({} if last else {"nextPageStart": start + size})}
        )
    number = int(query.get("page", ["0"])[0])
    page = items[number * size : (number + 1) * size]
    last = (number + 1) * size >= len(items)
    return _json({"content": page, "number": number, "size": size, "last": last})


def _rules_answer(app: FakeApp, query: dict[str, list[str]]) -> Answer:
    rules = [dict(rule) for rule in app.rules]
    if app.release != "latest":
        for rule in rules:
            rule.pop("blocking", None)
    return _list(app, rules, query)


def _scan_answer(app: FakeApp, query: dict[str, list[str]]) -> Answer:
    branch = query.get("branch", [app.default_branch])[0]
    if branch not in app.scans:
        return _json({"scanned": False, "actual": False, "running": False, "progress": 0})
    lines = app.scans[branch]
    if app.release == "latest":
        start = int(query.get("start", ["0"])[0])
        lines = lines[start : start + int(query.get("limit", ["100"])[0])]
    result = {"scanKey": "k1", "scanned": True, "actual": app.scans_actual, "progress": 100}
    return _json({**result, "running": False, "scheduled": False, "invalidLines": lines})


def _export_answer(app: FakeApp) -> Answer:
    body = app.export_override if app.export_override is not None else app.export_csv()
    kind = "application/zip" if body.startswith(b"PK") else CSV_TYPE
    return Answer(200, body, {"Content-Type": kind})


def _refused_body(app: FakeApp, action: str, data: Any) -> str | dict[str, str] | None:
    """Why a reviewed-line body is refused: a description, or violations by field."""
    if not isinstance(data, dict):
        return "The body is not a JSON object"
    if app.variant == "code-hosting" and app.release != "latest" and "ruleName" in data:
        return {"ruleName": "unknown field"}
    if not isinstance(data.get("matchText"), str) or not data["matchText"]:
        return {"matchText": "must not be empty"}
    # Wiki and issue tracker: the create body is {matchText, ruleName}, both strings.
    needs_rule = action == "create" and app.variant in ("wiki", "issue-tracker")
    rule = data.get("ruleName")
    if ("ruleName" in data or needs_rule) and (not isinstance(rule, str) or not rule):
        return {"ruleName": "must be a rule name"}
    if rule and app.check_rule_names and rule not in {item.get("name") for item in app.rules}:
        return {"ruleName": f"no rule named {rule}"}
    return None


def _review(app: FakeApp, action: str, body: bytes) -> Answer:
    try:
        data = json.loads(body)
    except ValueError:
        return Answer.error(400, "Bad Request", "The body is not JSON")
    if isinstance(data, dict):
        app.posted.append((action, data))
    refused = _refused_body(app, action, data)
    if isinstance(refused, str):
        return Answer.error(400, "Bad Request", refused)
    if refused:
        return Answer.error(400, "Bad Request", **refused)
    if action == "create":
        app.reviewed.append((data["matchText"], data.get("ruleName", "")))
    else:
        app.reviewed = [entry for entry in app.reviewed if entry[0] != data["matchText"]]
    return Answer(204)


_PATHS = {
    "code-hosting": {
        "rules": r"/rest/security/1\.0/rules",
        "repository_rules": r"/rest/security/1\.0/scan/[^/]+/rule_types/[^/]+",
        "scan": r"/rest/security/1\.0/scan/[^/]+/repos/[^/]+",
        "wider": SECURITY + r"/export/reviewed(/projects/[^/]+)?",
        "export": SECURITY + r"/export/reviewed/projects/[^/]+/repos/[^/]+",
        "review": SECURITY + r"/review-lines/projects/[^/]+/repos/[^/]+/(create|delete)",
    },
    "wiki": {
        "rules": SECURITY + "/rules",
        "export": SECURITY + r"/export/reviewed/space/[^/]+/findings",
        "review": SECURITY + r"/review/space/[^/]+/(create|delete)",
        "wider": SECURITY + r"/export/reviewed/findings",
    },
    "issue-tracker": {
        "rules": SECURITY + "/rules",
        "export": SECURITY + r"/export/reviewed/project/[^/]+/findings",
        "review": SECURITY + r"/review/project/[^/]+/(create|delete)",
        "wider": SECURITY + r"/export/reviewed/findings",
    },
    "hosted": {
        "rules": "/rest/rules",
        "settings": "/rest/rules/generic-password-settings",
    },
}


def _accepts(accept: str, media: str) -> bool:
    """Whether an Accept header admits ``media`` (no header admits everything)."""
    if not accept.strip():
        return True
    kind = media.split(";", 1)[0].split("/", 1)[0]
    ranges = [part.split(";", 1)[0].strip().lower() for part in accept.split(",")]
    return any(r in (media.split(";", 1)[0], f"{kind}/*", "*/*") for r in ranges)


def _not_json(headers: Any) -> Answer | None:
    """The documents send JSON bodies with Content-Type application/json (415 otherwise)."""
    sent = str(headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if sent != "application/json":
        return Answer.error(415, "Unsupported Media Type", "Send Content-Type application/json")
    return None


def _route(app: FakeApp, method: str, target: str, body: bytes, headers: Any) -> Answer:
    from urllib.parse import parse_qs

    path, _, raw_query = target.partition("?")
    query = parse_qs(raw_query)
    for name, pattern in _PATHS[app.variant].items():
        match = re.fullmatch(pattern, path)
        if match is None:
            continue
        allowed = "POST" if name == "review" else "GET"
        if method != allowed:
            answer = Answer.error(405, "Method Not Allowed", f"{method} is not allowed here")
            answer.headers["Allow"] = allowed
            return answer
        if name == "review":
            return _not_json(headers) or _review(app, match.group(1), body)
        answers = {
            "rules": lambda: _rules_answer(app, query),
            "repository_rules": lambda: _list(app, app.repository_rules, query),
            "export": lambda: _export_answer(app),
            "scan": lambda: _scan_answer(app, query),
            "wider": lambda: _wider_answer(app, path),
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
