"""Near misses that look like secrets and are not: none of them may be reported."""

from __future__ import annotations

import base64
import hashlib
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from testing.tokens import expand

ROOT = Path(__file__).resolve().parent.parent
RNG = random.Random("precision")  # noqa: S311 - test data, not cryptography


def digest(seed: str, kind: str = "sha512") -> bytes:
    return hashlib.new(kind, seed.encode()).digest()


def b64(seed: str, kind: str = "sha512") -> str:
    return base64.b64encode(digest(seed, kind)).decode()


def hexdigest(seed: str, kind: str = "sha1") -> str:
    return hashlib.new(kind, seed.encode()).hexdigest()


UUID = str(uuid.UUID(int=RNG.getrandbits(128)))
SHA = hexdigest("commit")
PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n" + bytes(RNG.getrandbits(8) for _ in range(300))
).decode()

NEAR_MISSES = {
    "uuid": f'request_id = "{UUID}"',
    "uuid in json": f'{{"id": "{UUID}", "tenantId": "{UUID}"}}',
    "uuid api key": f'api_key = "{UUID}"',
    "git sha": f"commit {SHA}",
    "git sha assigned": f'revision: "{SHA}"',
    "short sha": f"Merge {SHA[:7]} into main",
    "sha256": f"sha256 = {hexdigest('a', 'sha256')}",
    "docker digest": f"image: python@sha256:{hexdigest('img', 'sha256')}",
    "npm integrity": f'"integrity": "sha512-{b64("pkg")}",',
    "npm resolved": '"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",',
    "yarn.lock": f"  integrity sha512-{b64('yarn')}",
    "pnpm-lock": f"    resolution: {{integrity: sha512-{b64('pnpm')}}}",
    "poetry.lock": f'    {{file = "requests-2.31.0-py3-none-any.whl", hash = "sha256:{hexdigest("p", "sha256")}"}},',
    "requirements hash": f"requests==2.31.0 --hash=sha256:{hexdigest('r', 'sha256')}",
    "go.sum": f"golang.org/x/text v0.14.0 h1:{b64('go', 'sha256')}",
    "cargo.lock": f'checksum = "{hexdigest("c", "sha256")}"',
    "gemfile.lock": "    rails (7.1.2)",
    "data uri": f'<img src="data:image/png;base64,{PNG}">',
    "css data uri": f"background: url(data:image/png;base64,{PNG});",
    "hex colour": "color: #a1b2c3; background-color: #FFFFFF;",
    "aws example id": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws example secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "stripe test key": expand("stripe.api_key = 'sk_test_{rand:Aa0:24}'", "stripe"),
    "stripe publishable": expand("STRIPE_PUBLISHABLE_KEY=pk_live_{rand:Aa0:24}", "pk"),
    "made-up aws id": "AKIAABCDEFGHIJKLMNOP",
    "password placeholder": 'password = "<your password here>"',
    "password masked": "password: ********",
    "password from env": "DB_PASSWORD=${DB_PASSWORD}",
    "github actions secret": "token: ${{ secrets.GITHUB_TOKEN }}",
    "helm value": "password: {{ .Values.postgresql.password | quote }}",
    "python code": "password = request.form.get('password')",
    "go code": 'password := os.Getenv("DB_PASSWORD")',
    "rust code": 'let password = env::var("DB_PASSWORD")?;',
    "java code": 'String password = System.getenv("DB_PASSWORD");',
    "ruby code": "password = ENV.fetch('DB_PASSWORD')",
    "js code": "const password = process.env.DB_PASSWORD;",
    "type annotation": "password: str",
    "password prompt": 'password = getpass.getpass("Password: ")',
    "form field": '<input type="password" name="password" id="password">',
    "csrf token": f'<meta name="csrf-token" content="{b64("csrf", "sha256")}">',
    "base64 in test": f'expected = "{b64("data")}"',
    "jwt header only": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    "public key": f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64('pub', 'sha256')[:43]} me@host",
    "certificate": "-----BEGIN CERTIFICATE-----",
    "key in code": 'if pem.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
    "version": "version = 1.2.3",
    "url, no password": "https://user@example.com/repo.git",
    "localhost db": "postgres://postgres:postgres@localhost:5432/test",
    "k8s secret ref": "secretKeyRef: {name: db, key: password}",
    "primary key": "id = models.AutoField(primary_key=True)",
    "sort key": f'sort_key = "{hexdigest("s", "md5")}"',
    "type annotation in a signature": "def login(user: str, password: str, realm: _Realm) -> bool: ...",
    "private type": "    key_password: _PasswordType | None",
    "annotated constant": "PROXYPASSWORD: Final = 10176",
    "typed private key": "        private_key: PKCS7PrivateKeyTypes,",
    "secrets manager arn": '"Resource": "arn:aws:secretsmanager:*:*:secret:rds-db-credentials/*",',
    "password policy arn": '"IAMUserChangePassword": "arn:aws:iam::aws:policy/IAMUserChangePassword",',
    "sigv4 scope": "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/s3/aws4_request",
    "module versions": "spwd: 3.0-3.12",
    "sphinx docstring": "    :param password: When `True`, the value is hidden.",
    "shell default": 'echo "${DB_PASSWORD:-unset}"',
    "printf format": 'USER_PASSWD = "%s:%s" % (USER, PASSWD)',
    "label value": 'NOPASSWORD = "no-password-required"',
    "multi-host url": "MultiHostUrl('https://foo.com:123,foo:bar@bar.com/path')",
    "html-escaped type": "<code>{pem: &#x3C;string>[, passphrase: &#x3C;string>]}</code>",
    "sphinx type": "        :type passphrase: :py:data:`bytes`",
    "maven settings prose": "<passphrase>optional; leave empty if not used.</passphrase>",
    "bit flag": "\tGNUTLS_PKCS_NULL_PASSWORD = 1<<8,",
    "rfc 6749 example": '"access_token":"2YotnFZFEjr1zCsicMWpAA",',
    "rfc 6749 basic": "Authorization: Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW",
    "label sentence": "const password = 'Password used to generate key';",
    "option type": '"--prompt-for-password": "bool",',
    "docstring prose": "    password: Required. Secret version reference containing the password.",
    "docstring type": "    credentials: oauth2client.client.OAuth2Credentials.",
    "metavariable": "oauth2-client-secret=OAUTH2-CLIENT-SECRET]",
    "secret manager name": "--sasl-password='projects/123/secrets/my-secret/versions/1'",
    "query string": "data = 'username=admin&password=password&from_page=/'",
    "html doc": "<var>proxy_pass=None</var><big>)</big>",
    "escaped newline": 'help = "proxy_pass: CLOUDSDK_PROXY_PASSWORD\\n-"',
    "leetspeak sample": "self.master_password = 'P4ssword'",
    # Test-mode and publishable keys: not credentials to production.
    "stripe test secret": expand("STRIPE_SECRET_KEY=sk_test_{rand:Aa0:24}", "sk"),
    "stripe test restricted": expand("rk_test_{rand:Aa0:24}", "rk"),
    "stripe publishable test": expand("const stripe = Stripe('pk_test_{rand:Aa0:24}');", "pk"),
    "easypost test key": expand("EASYPOST_TEST_KEY=EZTK{rand:a0:54}", "ez"),
    "flutterwave test secret": expand("FLW_SECRET_KEY=FLWSECK_TEST-{rand:h:32}-X", "flw"),
    "flutterwave test public": expand("FLW_PUBLIC_KEY=FLWPUBK_TEST-{rand:h:32}-X", "flw"),
    "mapbox public token": expand(
        "mapboxgl.accessToken = 'pk.eyJ1Ijoi{rand:Aa0:40}.{rand:Aa0_-:22}';", "mapbox"
    ),
    "braintree sandbox": expand("access_token$sandbox${rand:a0:16}${rand:h:32}", "bt"),
    # Placeholders.
    "placeholder angle": "API_TOKEN=<token>",
    "placeholder angle quoted": 'api_key: "<your-api-key>"',
    "placeholder env": "GITHUB_TOKEN=${TOKEN}",
    "placeholder xs": "api_key = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
    "placeholder your key": 'OPENAI_API_KEY="your-api-key-here"',
    "placeholder replace me": "SECRET_KEY=REPLACE_ME",
    "placeholder changeme": "password: changeme123",
    "placeholder insert": 'client_secret = "INSERT_CLIENT_SECRET_HERE"',
    "placeholder dots": "token: ...",
    "placeholder openai xs": 'OPENAI_API_KEY="sk-' + "x" * 48 + '"',
    "placeholder github xs": "GITHUB_TOKEN=ghp_" + "x" * 36,
    "placeholder aws xs": "AWS_ACCESS_KEY_ID=AKIA" + "X" * 16,
    "placeholder elided": 'token = "ghp_..."',
    "query placeholder": "https://api.example.com/data?api_key=YOUR_API_KEY",
    "query format field": "https://api.example.com/data?key={API_KEY}",
    "xml masked": '<add key="Password" value="********" />',
    "xml msbuild property": '<add key="ApiKey" value="$(ApiKey)" />',
    "auth header placeholder": "Authorization: Bearer YOUR_ACCESS_TOKEN",
    "curl placeholders": "curl -u <user>:<password> https://api.example.com",
    "url placeholders": "mongodb+srv://<username>:<password>@cluster0.mongodb.net/test",
    "url documentation": "https://username:password@example.com",
    "private key elided": '"private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"',
    "private key redacted": "-----BEGIN RSA PRIVATE KEY-----\n<redacted>\n-----END RSA PRIVATE KEY-----",
    "env example file": "SECRET_KEY=",
    "laravel empty key": "APP_KEY=",
    # References to a secret kept elsewhere.
    "settings attribute": "api_key = settings.OPENAI_API_KEY",
    "config attribute": "const token = config.auth.token;",
    "go field": "token := cfg.Token",
    "command substitution": 'export TOKEN="$(cat /run/secrets/token)"',
    "terraform variable": "  password = var.db_password",
    "terraform resource": "  password = random_password.db.result",
    "ansible vault variable": 'ansible_password: "{{ vault_ansible_password }}"',
    "yaml alias": "password: *default_password",
    "secret file path": "DB_PASSWORD_FILE=/run/secrets/db_password",
    "secret name": "secretName: postgres-credentials",
    "token endpoint": "token_url = 'https://oauth2.googleapis.com/token'",
    "f-string header": 'headers = {"Authorization": f"Bearer {token}"}',
    "header from env": "Authorization: Bearer ${ACCESS_TOKEN}",
    "basic from code": 'headers["Authorization"] = "Basic " + base64.b64encode(creds)',
    "url from env": "postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}:5432/app",
    "npmrc from env": "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    "docker login from env": 'echo "$DOCKER_PASSWORD" | docker login -u "$DOCKER_USERNAME" --password-stdin',
    "dockerfile env from build arg": "ENV API_TOKEN ${API_TOKEN}",
    "netrc from env": "machine github.com login $GH_USER password $GH_TOKEN",
    "setter from env": 'props.setProperty("password", System.getenv("PW"));',
    "sql bind parameter": "WHERE password = :password",
    # Hashes, identifiers and encodings.
    "sha1 labelled": f"sha1: {hexdigest('x')}",
    "sha256 checksum": f'checksum_sha256 = "{hexdigest("y", "sha256")}"',
    "md5 etag": f'ETag: "{hexdigest("z", "md5")}"',
    "md5sum output": f"{hexdigest('w', 'md5')}  release.tar.gz",
    "sha256sum output": f"{hexdigest('w', 'sha256')}  release.tar.gz",
    "bcrypt hash": expand("hash = '$2b$12${rand:Aa0:53}'", "bcrypt"),
    "htpasswd apr1 hash": expand("admin:$apr1${rand:Aa0:8}${rand:Aa0:22}", "apr1"),
    "subresource integrity": f'<script src="x.js" integrity="sha384-{b64("sri", "sha384")}"></script>',
    "uuid request id": f"X-Request-Id: {UUID}",
    "uuid idempotency key": f'idempotency_key = "{UUID}"',
    "uuid client id": f"client_id: {UUID}",
    "base64 of prose": f'value: "{base64.b64encode(b"just a harmless configuration string").decode()}"',
    "public key pem": "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
    + b64("pem")[:64]
    + "\n-----END PUBLIC KEY-----",
    "google page token": "https://www.googleapis.com/drive/v3/files?pageToken="
    + expand("{rand:Aa0:30}", "page"),
    # Code, markup and prose that mention a password or a token.
    "minified js": 'var e=function(t){return t.apiKey||t.token},n="password",r=e({apiKey:n});',
    "minified destructuring": "function(e){var t=e.password,n=e.token;return a(t,n)}",
    "css class": ".password-field{border:1px solid #a1b2c3}.token-list{color:#fff}",
    "css variable": "--secret-color: #7f3fbf;",
    "i18n hint": '"password_hint": "Your password must contain at least 8 characters"',
    "i18n title": 'password_reset_title: "Reset your password"',
    "i18n label": 'password: "Mot de passe"',
    "i18n message": '"token_expired": "Ihr Token ist abgelaufen"',
    "sql column": "  password varchar(255) NOT NULL,",
    "sql migration": "ALTER TABLE users ADD COLUMN password_hash TEXT;",
    "sql placeholder": "SELECT * FROM users WHERE password = ? AND username = ?",
    "html input": '<input type="password" name="password" placeholder="Password" required>',
    "html label": '<label for="password">Password</label>',
    "python signature": "def login(username: str, password: str) -> bool:",
    "python defaults": "def connect(host, password=None, token=None):",
    "getpass": "password = getpass()",
    "getpass with prompt": "password = getpass.getpass(prompt='Password: ')",
    "input prompt": "token = input('Token: ')",
    "empty yaml": 'password: ""',
    "empty yaml single": "password: ''",
    "empty json": '"password": "",',
    "null yaml": "password: null",
    "tilde yaml": "password: ~",
    "boolean setting": "require_password: true",
    "length setting": "PASSWORD_MIN_LENGTH=12",
    "google docstring": "    password (str): The user's password.",
    "jsdoc": " * @param {string} password - the user password",
    "log message": 'logger.info("password changed for user %s", user)',
    "test assertion": "assert response.json()['token'] == token",
    "test fixture value": 'password = "test-password-123"',
    "xkcd comic phrase": "password = 'correct horse battery staple'",
    "django validator": "'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator',",
    "token type": "TOKEN_TYPE=Bearer",
    "java import": "import org.springframework.security.crypto.password.PasswordEncoder;",
    "go struct tag": '\tPassword string `json:"password" yaml:"password"`',
    "rust field": "    pub password: Option<String>,",
    "typescript field": "  password?: string;",
    "graphql argument": "  login(email: String!, password: String!): AuthPayload",
    "openapi format": "          format: password",
    "token limit": "max_tokens = 4096",
    "token length": "MAX_TOKEN_LENGTH=2048",
    "pem header in code": 'const header = "-----BEGIN OPENSSH PRIVATE KEY-----";',
    "xml length setting": '<add key="PasswordLength" value="12" />',
    "pam config": "password required pam_unix.so",
    # Password hashes, encrypted values and secret-store references.
    "argon2 hash": expand(
        'hashed_password: "$argon2id$v=19$m=65536,t=3,p=4${rand:b64:22}${rand:b64:43}"', "argon2"
    ),
    "django hash": expand("PASSWORD_HASH=pbkdf2_sha256$260000${rand:Aa0:22}${rand:b64:43}=", "dj"),
    # A shadow line (root:$6$salt$hash:19000:...) is no near-miss: a leaked /etc/shadow
    # is cracked offline, and SHADOW_PASSWORD_HASH reports it (issue 29).
    "jwt header as token": 'token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"',
    "azure key vault reference": "password: @Microsoft.KeyVault(SecretUri=https://v.vault.azure.net/secrets/db/)",
    "cloudformation ref": "MasterUserPassword: !Ref DBPassword",
    "cloudformation sub": "MasterUserPassword: !Sub '{{resolve:ssm-secure:/db/password:1}}'",
    "sealed secret": "    password: AgB" + expand("{rand:b64:300}", "sealed"),
    "sops ciphertext": f"password: ENC[AES256_GCM,data:{b64('sops')},type:str]",
    "token hash": f'token_hash = "{hexdigest("t", "sha256")}"',
    "session id": expand('session_id = "{rand:h:32}"', "session"),
    "password regex": r'PASSWORD_REGEX = "^(?=.*[A-Z])(?=.*\d)[A-Za-z\d@$!%*?&]{8,}$"',
    "properties default": "spring.datasource.password=${DB_PASSWORD:}",
}


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


@pytest.mark.parametrize("line", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_miss_is_not_reported(scanner: Scanner, line: str) -> None:
    findings = scanner.scan(Fragment(path="app/settings.txt", text=line + "\n"))
    assert [(f.rule, f.match_text) for f in findings] == []


def test_lockfiles_are_not_reported(scanner: Scanner) -> None:
    lock = "\n".join(
        f'    "node_modules/pkg{n}": {{\n      "version": "1.0.{n}",\n'
        f'      "resolved": "https://registry.npmjs.org/pkg{n}/-/pkg{n}-1.0.{n}.tgz",\n'
        f'      "integrity": "sha512-{b64(str(n))}"\n    }},'
        for n in range(200)
    )
    assert scanner.scan(Fragment(path="package-lock.json", text=lock)) == []


def test_this_repository_reports_nothing() -> None:
    """Dogfood: spillguard's own source, tests and fixtures hold no secret.

    The files git tracks: caches beside them (bytecode, the rules' marshal copy) are
    binaries whose printable runs glue the rules' own examples together."""
    names = ["src", "tests", "testing", "README.md", "sample-config", "bench", "hooks", "docs"]
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--", *names],
        capture_output=True,
        check=True,
    ).stdout
    paths = [str(ROOT / name) for name in listed.decode().split("\0") if name]
    result = subprocess.run(
        [sys.executable, "-m", "spillguard", "scan", "--files", *paths],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
