"""False positives QA found scanning real packages (docs, Makefiles, discovery documents):
none may be reported, and the secrets these fixes must not lose still are."""

from __future__ import annotations

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from testing.tokens import expand

SILENT = {
    # GENERIC_PASSWORD
    "passwd file mounted": "\tdocker run -v /etc/passwd:/etc/passwd:ro -v /etc/group:/etc/group:ro img",
    "passwd file path": "PASSWD_FILE=/etc/passwd",
    "lambda default": "        password=lambda: self.password,",
    "format template": "        userpwd = '{}:{}'.format(user, pw)",
    "numbered format template": '    userpwd = "{0}:{1}".format(user, pw)',
    "discovery document host": '  "description": "Only password:www.google.com/ is supported",',
    "host name value": "smtp_password: mail.example.com",
    # Connection URIs in documentation.
    "redis optional userinfo": "    url: redis://[[username]:[password]]@localhost:6379/0",
    "redis word placeholder": "    redis://user:password@host:6379",
    "redis angle placeholder": "    redis://user:<password>@host:6379",
    "redis format field": "    redis://user:{password}@host:6379",
    "redis env field": "    redis://user:${PASSWORD}@host:6379",
    "postgres optional userinfo": "    postgresql://[user[:password]@][netloc][:port][/dbname]",
    "postgres format field": "    postgres://user:{password}@host/db",
    "mysql angle placeholder": "    mysql://user:<password>@host/db",
    "mysql optional userinfo": "    mysql://[[user]:[password]]@host/db",
    "mongodb optional userinfo": "    mongodb://[username:password@]host1[:port1][,host2[:port2]]",
    "amqp word placeholder": "    amqp://user:password@host/vhost",
    "amqp optional userinfo": "    amqp://[[user]:[password]]@host/vhost",
    "https optional userinfo": "    https://[[user]:[password]]@host/path",
    # NETRC_PASSWORD
    "docstring prose": "    Password authentication.",
    "docstring prose lowercase": "    password authentication.",
    "wrapped sentence": "  password hashing.",
    # GENERIC_SECRET
    "gcp resource path": "      secret: `projects/*/secrets/*/versions/*`",
    "gcp resource template": "  secret: projects/{project}/secrets/{secret}/versions/latest",
    "oauth1 response": "    'oauth_token=lsdkfol23w54jlksdef&oauth_token_secret=qwe089234lkjsdf"
    "&oauth_authorized_realms=movies+pics&my_specific=argument'",
    "oauth1 query": "https://example.com/cb?oauth_token_secret=qwe089234lkjsdf&oauth_authorized_realms=photos",
    # RFC 6749, 6750, 7009 and 5849 samples, as oauthlib and authlib document them.
    "rfc 7009 revocation": "            token=45ghiukldjahdnhzdauz&token_type_hint=refresh_token",
    "rfc 6750 query": "        https://example.com/protected?access_token=kjfch2345sdf   # Query",
    "rfc 6750 body": "        access_token=sdf23409df   # Body",
    "rfc 6749 refresh": '         "refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA",',
    "rfc 6750 bearer": "    GET /resource?access_token=mF_9.B5f-4.1JqM HTTP/1.1",
    "oidc access token": '    "access_token": "SlAV32hkKG", "refresh_token": "8xLOxBtZp8",',
    "oidc implicit": "    https://client.example.org/cb#access_token=SlAV32hkKG&token_type=bearer",
    "rfc 5849 token": '    oauth_token="h480djs93hd8", oauth_token_secret="pfkkdhi9sl3r4s00"',
    "rfc 5849 response": "    oauth_token=nnch734d00sl2jdk&oauth_token_secret=pfkkdhi9sl3r4s00",
    "rfc 5849 temporary": "    oauth_token=hh5s93j4hdidpola&oauth_token_secret=hdhd0244k9j7ao03",
    "google authenticator sample": '    from_uri("otpauth://totp/alice@bigco.com?secret=JBSWY3DPEHPK3PXP&issuer=Big")',
    "authenticator sample lowercase": "    otpauth://totp/x?secret=jbswy3dpehpk3pxp&digits=8",
    # Hexadecimal constants whose names end in PASS.
    "gl constant": "  STENCIL_BACK_PASS_DEPTH_PASS: 0x8803,",
    "flag constant": "    CAN_FILTER_PASS = 0x02",
    # Digests labelled as digests, with a token's prefix inside them by chance.
    "wheel RECORD digest": "pip/_vendor/platformdirs/version.py,sha256=qaN-fw_{rand:Aa0:36},160",
    "lock file integrity": '  "integrity": "sha512-{rand:b64:40}/fw_{rand:Aa0:30}=="',
    "go.sum hash": "golang.org/x/text v0.14.0 h1:{rand:b64:12}+fw_{rand:Aa0:26}=",
    # C headers (/usr/include): a #define's unquoted value is another identifier or a
    # number, and a quoted one of words joined by hyphens or dots is a name.
    "openssl object id": "#define OBJ_userPassword                OBJ_X509,35L",
    "openssl object list": "#define OBJ_id_PasswordBasedMAC         OBJ_ISO_US,113533L,7L,66L,13L",
    "openssl short name": '#define SN_setct_CapTokenSeq            "setct-CapTokenSeq"',
    "dav property path": '#define DAV_ACTIVELOCK_TOKEN ".prop.lockdiscovery.activelock.locktoken.href"',
    # KEYWORD_DSN_PASSWORD: Python keyword arguments, not a libpq DSN.
    "keyword arguments": "        self._construct(group, host, share, user=user, password=password)",
}

FOUND = {
    "netrc one line": (
        "NETRC_PASSWORD",
        "machine api.example.com login deploy password {rand:Aa0:18}",
    ),
    "netrc login line": ("NETRC_PASSWORD", "  login deploy password {rand:Aa0:18}"),
    "netrc password line": ("NETRC_PASSWORD", "  password {rand:Aa0:18}"),
    "quoted secret with &": (
        "GENERIC_SECRET",
        'JWT_SECRET="{rand:Aa0:12}&{rand:Aa0:12}#{rand:Aa0:6}"',
    ),
    "unquoted secret before &": (
        "GENERIC_SECRET",
        "client_secret_x=1&app_secret={rand:Aa0:24}&x=1",
    ),
    "password with a dot": ("GENERIC_PASSWORD", "password = '{rand:Aa0:8}.{rand:Aa0:8}'"),
    "redis password": ("REDIS_CONNECTION_URI", "redis://default:{rand:Aa0:20}@cache:6379/0"),
    "c string literal": ("DIRECTIVE_SECRET", '#define UPLOAD_TOKEN "{rand:Aa0:32}"'),
    "fireworks key beside a digest": (
        "FIREWORKS_API_KEY",
        "FIREWORKS_KEY=fw_{rand:Aa0:30}  # sha256=",
    ),
    "fcm server key": (
        "FIREBASE_CLOUD_MESSAGING_KEY",
        "FCM_KEY=AAAA{rand:Aa0_-:7}:APA91b{rand:Aa0_-:134}",
    ),
}


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


@pytest.mark.parametrize("line", SILENT.values(), ids=SILENT.keys())
def test_documentation_and_code_are_not_reported(scanner: Scanner, line: str) -> None:
    findings = scanner.scan(Fragment(path="pkg/module.py", text=expand(line, "silent") + "\n"))
    assert [(f.rule, f.match_text) for f in findings] == []


@pytest.mark.parametrize(("rule", "template"), FOUND.values(), ids=FOUND.keys())
def test_secrets_beside_them_are_still_reported(scanner: Scanner, rule: str, template: str) -> None:
    line = expand(template, rule)
    findings = scanner.scan(Fragment(path="pkg/settings.txt", text=line + "\n"))
    assert [f.rule for f in findings] == [rule], line


def test_no_builtin_keyword_is_one_repeated_character() -> None:
    """A keyword like 'aaaa' hits at every offset of a long run of a's (base64 padding,
    zero-filled data), which cost the prefilter over a second per megabyte."""
    repeated = [
        (rule.name, word)
        for rule in builtin_rules()
        for word in rule.keywords
        if len(word) > 1 and len(set(word)) == 1
    ]
    assert repeated == []
