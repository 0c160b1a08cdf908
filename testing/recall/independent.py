"""An independent recall corpus: written from the providers' public token formats and
from how real files leak them, not from the rules' own examples.

Each provider family is a token generator (alphabet, length, checksum where the
format has one) and the environment name people give it; the file contexts below
place it the way repositories leak it (``.env``, compose files, Kubernetes
manifests, notebooks, code in a dozen languages) and put near-misses beside it
(placeholders, references, truncated tokens, bad checksums). Tokens are generated
at run time, so this file holds no credential.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import random
import string
import uuid
from typing import TYPE_CHECKING

from spillguard.detection.checksums import base62_crc32
from testing.recall.families import Case

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64U = ALNUM + "-_"
B32 = UP + "234567"


def chars(rng: random.Random, alphabet: str, length: int) -> str:
    """``length`` characters of ``alphabet``, with every kind it offers (a real token
    of 20+ random characters practically always has upper, lower and digits)."""
    groups = [g for g in (UP, LO, DIG) if set(g) & set(alphabet)]
    while True:
        token = "".join(rng.choice(alphabet) for _ in range(length))
        if length < 10 or all(set(token) & set(g) for g in groups):
            return token


def crc_token(prefix: str) -> Callable[[random.Random], str]:
    """GitHub's and npm's shape: 30 base62 characters and their base62 CRC32."""

    def make(rng: random.Random) -> str:
        body = chars(rng, ALNUM, 30)
        return prefix + body + base62_crc32(body)

    return make


def simple(*parts: tuple[str, int] | str) -> Callable[[random.Random], str]:
    """A token of literal parts and (alphabet, length) random parts."""

    def make(rng: random.Random) -> str:
        return "".join(p if isinstance(p, str) else chars(rng, p[0], p[1]) for p in parts)

    return make


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    header = b64u(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {
        "sub": str(rng.randrange(10**6, 10**7)),
        "email": f"ops{rng.randrange(100)}@acme-corp.io",
        "role": "service_role",
        "iat": 1716239022,
        "exp": 2031599022,
    }
    return f"{header}.{b64u(json.dumps(claims).encode())}.{b64u(rng.randbytes(32))}"


def discord_bot(rng: random.Random) -> str:
    user = str(rng.randrange(10**17, 10**18 * 9))
    return f"{b64u(user.encode())}.{chars(rng, B64U, 6)}.{chars(rng, B64U, 38)}"


def pypi(rng: random.Random) -> str:
    # A macaroon: "pypi-" + base64url of a binary serialisation naming pypi.org.
    blob = b"\x02\x01\x08pypi.org\x02\x25\x00" + rng.randbytes(110)
    return "pypi-AgEIcHlwaS5vcmc" + b64u(blob)[19:]


def pem(kind: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        body = base64.b64encode(b"\x30\x82\x04\xa4\x02\x01\x00" + rng.randbytes(900)).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return "\n".join([f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"])

    return make


def openssh(rng: random.Random) -> str:
    body = base64.b64encode(b"openssh-key-v1\x00\x00\x00\x00\x04none" + rng.randbytes(300)).decode()
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    return "\n".join(
        ["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"]
    )


def pgp(rng: random.Random) -> str:
    body = base64.b64encode(b"\x95\x03\xc6\x04" + rng.randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join(
        [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "",
            *lines,
            "=" + chars(rng, B64, 4),
            "-----END PGP PRIVATE KEY BLOCK-----",
        ]
    )


def putty(rng: random.Random) -> str:
    pub = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + rng.randbytes(270)).decode()
    priv = base64.b64encode(rng.randbytes(660)).decode()
    return "\n".join(
        [
            "PuTTY-User-Key-File-3: ssh-rsa",
            "Encryption: none",
            "Comment: deploy@build",
            "Public-Lines: 6",
            *[pub[i : i + 64] for i in range(0, len(pub), 64)],
            "Private-Lines: 14",
            *[priv[i : i + 64] for i in range(0, len(priv), 64)],
            "Private-MAC: " + rng.randbytes(32).hex(),
        ]
    )


@dataclasses.dataclass(frozen=True)
class Provider:
    name: str
    make: Callable[[random.Random], str]
    #: The environment name people give it.
    env: str
    #: The token identifies itself (a prefix): it must be found in any context,
    #: even with no telling name beside it.
    prefixed: bool = True


PROVIDERS = [
    Provider("aws-access-key", simple("AKIA", (B32.replace("1", ""), 16)), "AWS_ACCESS_KEY_ID"),
    Provider("aws-secret-key", simple((B64, 40)), "AWS_SECRET_ACCESS_KEY", prefixed=False),
    Provider("gcp-api-key", simple("AIza", (B64U, 35)), "GOOGLE_API_KEY"),
    Provider("google-oauth-secret", simple("GOCSPX-", (B64U, 28)), "GOOGLE_CLIENT_SECRET"),
    Provider("azure-storage-key", simple((B64, 86), "=="), "AZURE_STORAGE_KEY", prefixed=False),
    Provider(
        "azure-ad-client-secret",
        simple((ALNUM, 3), "8Q~", (ALNUM + "_~.-", 31)),
        "AZURE_CLIENT_SECRET",
    ),
    Provider("github-pat", crc_token("ghp_"), "GITHUB_TOKEN"),
    Provider("github-oauth", crc_token("gho_"), "GH_OAUTH_TOKEN"),
    Provider("github-app", crc_token("ghs_"), "GITHUB_APP_TOKEN"),
    Provider(
        "github-fine-grained", simple("github_pat_11", (UP + DIG, 20), "_", (ALNUM, 59)), "GH_PAT"
    ),
    Provider("gitlab-pat", simple("glpat-", (ALNUM + "-_", 20)), "GITLAB_TOKEN"),
    Provider("gitlab-runner", simple("glrt-", (ALNUM + "-_", 20)), "RUNNER_TOKEN"),
    Provider(
        "slack-bot",
        simple("xoxb-", (DIG, 12), "-", (DIG, 13), "-", (ALNUM, 24)),
        "SLACK_BOT_TOKEN",
    ),
    Provider(
        "slack-user",
        simple("xoxp-", (DIG, 12), "-", (DIG, 12), "-", (DIG, 13), "-", (HEX, 32)),
        "SLACK_TOKEN",
    ),
    Provider(
        "slack-webhook",
        simple(
            "https://hooks.slack.com/services/T",
            (UP + DIG, 10),
            "/B",
            (UP + DIG, 10),
            "/",
            (ALNUM, 24),
        ),
        "SLACK_WEBHOOK_URL",
    ),
    Provider("stripe-live", simple("sk_live_51", (ALNUM, 97)), "STRIPE_SECRET_KEY"),
    Provider("stripe-restricted", simple("rk_live_51", (ALNUM, 97)), "STRIPE_RESTRICTED_KEY"),
    Provider("stripe-webhook", simple("whsec_", (ALNUM, 32)), "STRIPE_WEBHOOK_SECRET"),
    Provider("twilio-api-key", simple("SK", (HEX, 32)), "TWILIO_API_KEY"),
    Provider("twilio-auth-token", simple((HEX, 32)), "TWILIO_AUTH_TOKEN", prefixed=False),
    Provider(
        "sendgrid", simple("SG.", (ALNUM + "-_", 22), ".", (ALNUM + "-_", 43)), "SENDGRID_API_KEY"
    ),
    Provider("mailgun", simple("key-", (HEX, 32)), "MAILGUN_API_KEY"),
    Provider("mailchimp", simple((HEX, 32), "-us14"), "MAILCHIMP_API_KEY"),
    Provider(
        "openai-project",
        simple("sk-proj-", (B64U, 74), "T3BlbkFJ", (B64U, 74)),
        "OPENAI_API_KEY",
    ),
    Provider("openai-legacy", simple("sk-", (ALNUM, 20), "T3BlbkFJ", (ALNUM, 20)), "OPENAI_KEY"),
    Provider("anthropic", simple("sk-ant-api03-", (B64U, 93), "AA"), "ANTHROPIC_API_KEY"),
    Provider("huggingface", simple("hf_", (UP + LO, 34)), "HF_TOKEN"),
    Provider("npm", crc_token("npm_"), "NPM_TOKEN"),
    Provider("pypi", pypi, "PYPI_TOKEN"),
    Provider("docker-hub", simple("dckr_pat_", (B64U, 27)), "DOCKERHUB_TOKEN"),
    Provider(
        "heroku",
        lambda rng: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "HEROKU_API_KEY",
        prefixed=False,
    ),
    Provider("heroku-new", simple("HRKU-AA", (B64U, 58)), "HEROKU_API_KEY"),
    Provider("digitalocean", simple("dop_v1_", (HEX, 64)), "DIGITALOCEAN_TOKEN"),
    Provider("shopify", simple("shpat_", (HEX, 32)), "SHOPIFY_ACCESS_TOKEN"),
    Provider("shopify-secret", simple("shpss_", (HEX, 32)), "SHOPIFY_SHARED_SECRET"),
    Provider("discord-bot", discord_bot, "DISCORD_TOKEN", prefixed=False),
    Provider(
        "discord-webhook",
        simple("https://discord.com/api/webhooks/", (DIG, 19), "/", (B64U, 68)),
        "DISCORD_WEBHOOK",
    ),
    Provider(
        "telegram-bot",
        lambda rng: f"{rng.randrange(10**9, 8 * 10**9)}:AA{chars(rng, B64U, 33)}",
        "TELEGRAM_BOT_TOKEN",
    ),
    Provider("jwt", jwt, "SUPABASE_SERVICE_ROLE_KEY"),
    Provider("square", simple("EAAA", (B64U, 60)), "SQUARE_ACCESS_TOKEN"),
    Provider(
        "braintree",
        simple("access_token$production$", (LO + DIG, 16), "$", (HEX, 32)),
        "BRAINTREE_TOKEN",
    ),
    Provider(
        "atlassian", simple("ATATT3xFfGF0", (B64U, 171), "=", (HEX.upper(), 8)), "JIRA_API_TOKEN"
    ),
    Provider("linear", simple("lin_api_", (ALNUM, 40)), "LINEAR_API_KEY"),
    Provider("notion", simple("ntn_", (DIG, 11), (ALNUM, 35)), "NOTION_TOKEN"),
    Provider("airtable", simple("pat", (ALNUM, 14), ".", (HEX, 64)), "AIRTABLE_API_KEY"),
    Provider("postman", simple("PMAK-", (HEX, 24), "-", (HEX, 34)), "POSTMAN_API_KEY"),
    Provider("newrelic", simple("NRAK-", (UP + DIG, 27)), "NEW_RELIC_API_KEY"),
    Provider("datadog", simple((HEX, 32)), "DD_API_KEY", prefixed=False),
    Provider("grafana-sa", simple("glsa_", (ALNUM, 32), "_", (HEX, 8)), "GRAFANA_TOKEN"),
    Provider("sentry-user", simple("sntryu_", (HEX, 64)), "SENTRY_AUTH_TOKEN"),
    Provider("doppler", simple("dp.pt.", (ALNUM, 43)), "DOPPLER_TOKEN"),
    Provider("vault", simple("hvs.", (B64U, 90)), "VAULT_TOKEN"),
    Provider("terraform-cloud", simple((ALNUM, 14), ".atlasv1.", (ALNUM, 67)), "TFE_TOKEN"),
    Provider("pulumi", simple("pul-", (HEX, 40)), "PULUMI_ACCESS_TOKEN"),
    Provider("netlify", simple("nfp_", (ALNUM, 36)), "NETLIFY_AUTH_TOKEN"),
    Provider("supabase-pat", simple("sbp_", (HEX, 40)), "SUPABASE_ACCESS_TOKEN"),
    Provider("databricks", simple("dapi", (HEX, 32)), "DATABRICKS_TOKEN"),
    Provider(
        "age", simple("AGE-SECRET-KEY-1", ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)), "SOPS_AGE_KEY"
    ),
    Provider(
        "mapbox",
        lambda rng: "sk.eyJ1Ijoi" + chars(rng, ALNUM, 60) + "." + chars(rng, B64U, 22),
        "MAPBOX_SECRET_TOKEN",
    ),
    Provider("alibaba", simple("LTAI5t", (ALNUM, 18)), "ALIBABA_CLOUD_ACCESS_KEY_ID"),
    Provider("replicate", simple("r8_", (ALNUM, 37)), "REPLICATE_API_TOKEN"),
    Provider("groq", simple("gsk_", (ALNUM, 52)), "GROQ_API_KEY"),
    Provider("perplexity", simple("pplx-", (ALNUM, 48)), "PERPLEXITY_API_KEY"),
    Provider("xai", simple("xai-", (ALNUM, 80)), "XAI_API_KEY"),
    Provider("langsmith", simple("lsv2_pt_", (HEX, 32), "_", (HEX, 10)), "LANGCHAIN_API_KEY"),
    Provider("rubygems", simple("rubygems_", (HEX, 48)), "GEM_HOST_API_KEY"),
    Provider("nuget", simple("oy2", (LO + DIG, 43)), "NUGET_API_KEY"),
    Provider("artifactory", simple("AKCp8", (ALNUM, 68)), "ARTIFACTORY_API_KEY"),
    Provider("sonarqube", simple("squ_", (HEX, 40)), "SONAR_TOKEN"),
    Provider("figma", simple("figd_", (B64U, 40)), "FIGMA_TOKEN"),
    Provider("brevo", simple("xkeysib-", (HEX, 64), "-", (ALNUM, 16)), "BREVO_API_KEY"),
    Provider("dynatrace", simple("dt0c01.", (UP + DIG, 24), ".", (UP + DIG, 64)), "DT_API_TOKEN"),
    Provider(
        "hubspot",
        lambda rng: "pat-na1-" + str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "HUBSPOT_TOKEN",
    ),
    Provider("tailscale", simple("tskey-auth-k", (ALNUM, 17), "-", (ALNUM, 33)), "TS_AUTHKEY"),
    Provider("onepassword", simple("ops_eyJ", (B64U, 300)), "OP_SERVICE_ACCOUNT_TOKEN"),
    Provider("razorpay", simple("rzp_live_", (ALNUM, 14)), "RAZORPAY_KEY_ID"),
    Provider("flutterwave", simple("FLWSECK-", (HEX, 32), "-X"), "FLW_SECRET_KEY"),
    Provider("fcm-server", simple("AAAA", (B64U, 7), ":APA91b", (B64U, 134)), "FCM_SERVER_KEY"),
]

# --- contexts: how one token is written into a file ------------------------------------


def camel(env: str) -> str:
    head, *rest = env.lower().split("_")
    return head + "".join(part.title() for part in rest)


Ctx = tuple[str, str]  # (path, text with {T} for the token, {N} env name, {n} lower, {c} camel)

CONTEXTS: list[Ctx] = [
    (".env", "# production\nNODE_ENV=production\n{N}={T}\nLOG_LEVEL=info\n"),
    (".env.local", '{N}="{T}"\n'),
    (
        "docker-compose.yml",
        (
            "services:\n  api:\n    image: acme/api:1.4\n    environment:\n      - PORT=8080\n"
            "      - {N}={T}\n"
        ),
    ),
    (
        "deploy/values.yaml",
        "app:\n  replicas: 2\n  env:\n    {N}: {T}\n",
    ),
    ("config/settings.py", 'import os\n\nDEBUG = False\n{N} = "{T}"\n'),
    ("src/client.py", 'from acme import Client\n\nclient = Client({n}="{T}", timeout=30)\n'),
    ("src/config.js", "module.exports = {\n  port: 3000,\n  {c}: '{T}',\n};\n"),
    ("src/api.ts", 'export const {c}: string = "{T}";\n'),
    (
        "appsettings.json",
        '{\n  "Logging": {"LogLevel": {"Default": "Warning"}},\n  "{c}": "{T}"\n}\n',
    ),
    ("main.go", 'package main\n\nconst {c} = "{T}"\n\nfunc main() {}\n'),
    (
        "src/main/java/com/acme/Config.java",
        'package com.acme;\n\npublic class Config {\n    private static final String {N} = "{T}";\n}\n',
    ),
    (
        "Services/Settings.cs",
        'public static class Settings\n{\n    public const string {c} = "{T}";\n}\n',
    ),
    ("lib/acme.rb", "Acme.configure do |config|\n  config.{n} = '{T}'\nend\n"),
    ("config.php", "<?php\n$config['{n}'] = '{T}';\n"),
    ("src/main.rs", 'const {N}: &str = "{T}";\n'),
    ("app/src/main/kotlin/Config.kt", 'object Config {\n    const val {N} = "{T}"\n}\n'),
    ("Sources/App/Keys.swift", 'enum Keys {\n    static let {c} = "{T}"\n}\n'),
    ("scripts/deploy.sh", "#!/bin/sh\nset -e\nexport {N}={T}\n./deploy\n"),
    (".bash_history", "ls -la\nexport {N}='{T}'\npython run.py\n"),
    (
        "k8s/secret.yaml",
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\nstringData:\n"
            '  {N}: "{T}"\n'
        ),
    ),
    (
        ".github/workflows/ci.yml",
        (
            "jobs:\n  build:\n    runs-on: ubuntu-latest\n    env:\n      {N}: {T}\n    steps:\n"
            "      - run: make\n"
        ),
    ),
    (
        "notebooks/explore.ipynb",
        (
            '{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": [\n'
            '    "import os\\n",\n    "os.environ[\\"{N}\\"] = \\"{T}\\"\\n"\n   ]\n  }\n ]\n}\n'
        ),
    ),
    ("terraform.tfvars", 'region = "eu-west-1"\n{n} = "{T}"\n'),
    ("Dockerfile", 'FROM python:3.12-slim\nENV {N}={T}\nCMD ["python", "app.py"]\n'),
    ("application.properties", "server.port=8080\nacme.{c}={T}\n"),
    ("scripts/run.sh", "docker run -d -e {N}={T} -p 8080:8080 acme/api\n"),
    (".bash_history", "kubectl create secret generic api --from-literal={n}={T}\n"),
    (".bash_history", "heroku config:set {N}={T} -a acme-api\n"),
    ("main.go", 'cfg := Config{{\n\t{C}: "{T}",\n}}\n'),
    ("Config.kt", 'val settings = mapOf("{n}" to "{T}")\n'),
    ("Program.cs", 'Environment.SetEnvironmentVariable("{N}", "{T}");\n'),
    ("Startup.cs", 'var options = new ClientOptions {{ {C} = "{T}" }};\n'),
    ("app.py", 'os.environ["{N}"] = "{T}"\n'),
    ("app.py", 'os.environ.setdefault("{N}", "{T}")\n'),
    ("index.js", "process.env.{N} = '{T}';\n"),
    ("Main.java", 'System.setProperty("{n}", "{T}");\n'),
    ("Web.config", '<appSettings>\n  <add key="{N}" value="{T}" />\n</appSettings>\n'),
    ("config.ini", "[api]\n{n} = {T}\n"),
    ("config/initializers/acme.rb", "Acme.setup(:{n} => '{T}')\n"),
    ("config/config.exs", 'config :acme, {n}: "{T}"\n'),
    ("deploy.ps1", '$env:{N} = "{T}"\n'),
    ("setup.cmd", "set {N}={T}\n"),
    ("Makefile", "{N} ?= {T}\n"),
    ("variables.tf", 'variable "{n}" {{\n  default = "{T}"\n}}\n'),
    ("terraform.tfstate", '{{"env": "{{\\"{N}\\":\\"{T}\\"}}"}}\n'),
    ("logs/access.log", "GET /v1/hook?{n}={T}&x=1 HTTP/1.1\n"),
    ("serverless.yml", "provider:\n  environment:\n    {N}: '{T}'\n"),
    ("app.yaml", 'env_variables:\n  {N}: "{T}"\n'),
    ("task-def.json", '{{"environment": [{{"name": "{N}", "value": "{T}"}}]}}\n'),
]

#: Contexts with no telling name: only a self-identifying token can be found there.
NAMELESS: list[Ctx] = [
    ("src/client.py", 'from acme import Client\n\nclient = Client("{T}")\n'),
    ("src/app.js", "const client = createClient('{T}', { retries: 3 });\n"),
    ("logs/app.log", "2024-05-01T10:00:01Z INFO request sent with key={T} status=200\n"),
    ("src/api.py", 'headers = {{"Authorization": f"Bearer {T}"}}\n'),
    ("Api.kt", 'val headers = mapOf("Authorization" to "Bearer {T}")\n'),
    ("Api.cs", 'client.DefaultRequestHeaders.Add("X-Api-Key", "{T}");\n'),
    ("tests/fixtures/cassette.yaml", "request:\n  headers:\n    X-Api-Key:\n    - {T}\n"),
    ("README.md", "# Demo\n\nRun it with:\n\n    ./demo --key {T}\n"),
    (
        "cmd/run.go",
        'package main\n\nfunc main() {\n\tc := acme.New("{T}")\n\t_ = c\n}\n',
    ),
]

#: Near-miss contexts: {P} is the placeholder/reference/bad value.
NEAR: list[Ctx] = [
    (".env.example", "{N}=\n"),
    (".env.example", "{N}=your-{l}-here\n"),
    (".env.sample", "{N}=<{N}>\n"),
    ("docker-compose.yml", "services:\n  api:\n    environment:\n      {N}: ${{N}}\n"),
    (".github/workflows/ci.yml", "    env:\n      {N}: ${{{{ secrets.{N} }}}}\n"),
    ("chart/templates/secret.yaml", "stringData:\n  {N}: {{{{ .Values.{c} | quote }}}}\n"),
    ("settings.py", 'import os\n{N} = os.getenv("{N}")\n'),
    ("src/config.js", "export const {c} = process.env.{N};\n"),
    ("src/config.js", "const {c} = process.env.{N} || '';\n"),
    ("app.rb", "{n} = ENV.fetch('{N}')\n"),
    ("README.md", "Set `{N}` to the key from your dashboard (it looks like `{P}`).\n"),
    ("docs/setup.md", "export {N}={P}\n"),
]


def placeholders(provider: Provider, rng: random.Random) -> list[str]:
    """Values that look like the provider's token but are not one."""
    real, other = provider.make(rng), provider.make(rng)
    # the literal prefix: what two tokens share (at least 3 characters, as "hf_")
    shared = next((i for i, (a, b) in enumerate(zip(real, other, strict=False)) if a != b), 0)
    prefix = real[: max(3, shared)]
    out = [
        prefix + "x" * (len(real) - len(prefix)),
        prefix + "X" * (len(real) - len(prefix)),
        prefix + "...",
        prefix + "<your-token>",
        real[: len(prefix) + 6] + "...",
    ]
    if provider.make.__qualname__.startswith("crc_token"):
        # the right shape, the wrong checksum
        out.append(real[:-6] + ("AAAAAA" if real[-6:] != "AAAAAA" else "BBBBBB"))
    return out


def _fill(template: str, provider: Provider, token: str, other: str = "") -> str:
    return (
        template.replace("{{", "\0")
        .replace("}}", "\1")
        .replace("{T}", token)
        .replace("{N}", provider.env)
        .replace("{n}", provider.env.lower())
        .replace("{c}", camel(provider.env))
        .replace("{C}", camel(provider.env)[:1].upper() + camel(provider.env)[1:])
        .replace("{l}", provider.env.lower().replace("_", "-"))
        .replace("{P}", other)
        .replace("\0", "{")
        .replace("\1", "}")
    )


def _line_of(text: str, token: str) -> int:
    first = token.splitlines()[0]
    for number, line in enumerate(text.splitlines(), 1):
        if first in line or json.dumps(first)[1:-1] in line:
            return number
    raise AssertionError(f"token not placed: {first[:12]}")


def provider_cases(seed: str) -> Iterator[Case]:
    for provider in PROVIDERS:
        rng = random.Random(f"{seed}-{provider.name}")
        family = f"svc:{provider.name}"
        contexts = CONTEXTS + (NAMELESS if provider.prefixed else [])
        for path, template in contexts:
            token = provider.make(rng)
            text = _fill(template, provider, token)
            yield Case(
                family,
                f"{path}: {template.splitlines()[-1][:40]}",
                path,
                text,
                _line_of(text, token),
            )
        bad = placeholders(provider, rng) if provider.prefixed else ["changeme"]
        for index, (path, template) in enumerate(NEAR):
            value = bad[index % len(bad)]
            yield Case(
                family,
                f"near {path}: {value[:30]}",
                path,
                _fill(template, provider, "", value),
                None,
            )
        for value in bad:
            for path, template in (CONTEXTS[0], CONTEXTS[4], CONTEXTS[6]):
                yield Case(
                    family,
                    f"near {path}: {value[:30]}",
                    path,
                    _fill(template, provider, value),
                    None,
                )


# --- whole files: credential files, keys, connection strings, framework secrets ---------


def pw(rng: random.Random, length: int = 16) -> str:
    return chars(rng, ALNUM, length - 2) + rng.choice("!#%*") + rng.choice(DIG)


def _mark(text: str) -> tuple[str, int]:
    """The text with its marker ``»`` removed, and the marked line's number."""
    for number, line in enumerate(text.splitlines(), 1):
        if "»" in line:
            return text.replace("»", ""), number
    raise AssertionError("no marker")


def whole_files(rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    """family -> [(path, text with » at the start of the secret's line)]."""
    u = "deploy"
    p, p2, p3 = pw(rng), pw(rng, 20), chars(rng, ALNUM, 24)
    host = "db-prod-01.acme-internal.net"
    ssh_rsa, ssh_ed = pem("RSA PRIVATE KEY")(rng), openssh(rng)
    enc = pem("ENCRYPTED PRIVATE KEY")(rng)
    ec = pem("EC PRIVATE KEY")(rng)
    pkcs8 = pem("PRIVATE KEY")(rng)
    sa_key = pem("PRIVATE KEY")(rng).replace("\n", "\\n")
    auth = base64.b64encode(f"{u}:{p}".encode()).decode()
    return {
        "private-key": [
            ("id_rsa", "»" + ssh_rsa + "\n"),
            ("home/.ssh/id_ed25519", "»" + ssh_ed + "\n"),
            ("certs/server.key", "»" + ec + "\n"),
            ("certs/tls.key", "»" + pkcs8 + "\n"),
            ("certs/enc.key", "»" + enc + "\n"),
            ("keys/deploy.ppk", "»" + putty(rng) + "\n"),
            ("keys/signing.asc", "»" + pgp(rng) + "\n"),
            ("src/keys.py", 'KEY = """»' + pkcs8 + '"""\n'),
            ("config/key.json", '{"key": "»' + pkcs8.replace("\n", "\\n") + '"}\n'),
            (
                "k8s/tls.yaml",
                "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: "
                + base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n").decode()
                + "\n»  tls.key: "
                + base64.b64encode(pkcs8.encode()).decode()
                + "\n",
            ),
        ],
        "service-account": [
            (
                "gcp-sa.json",
                (
                    '{\n  "type": "service_account",\n  "project_id": "acme-prod-4471",\n'
                    f'  "private_key_id": "{rng.randbytes(20).hex()}",\n'
                    f'»  "private_key": "{sa_key}\\n",\n'
                    '  "client_email": "ci@acme-prod-4471.iam.gserviceaccount.com",\n'
                    f'  "client_id": "{rng.randrange(10**20, 10**21)}"\n}}\n'
                ),
            ),
        ],
        "credential-files": [
            (".git-credentials", f"»https://{u}:{crc_token('ghp_')(rng)}@github.com\n"),
            (".git-credentials", f"»https://oauth2:{p3}@gitlab.acme.io\n"),
            (".pgpass", f"»{host}:5432:orders:{u}:{p}\n"),
            ("home/.pgpass", f"*:*:*:postgres:{p2}\n".replace("*:*", "»*:*", 1)),
            (".netrc", f"machine api.acme.io\n  login {u}\n»  password {p}\n"),
            ("_netrc", f"»machine ftp.acme.io login {u} password {p2}\n"),
            (
                ".npmrc",
                f"registry=https://registry.npmjs.org/\n»//registry.npmjs.org/:_authToken={crc_token('npm_')(rng)}\n",
            ),
            (
                ".npmrc",
                f"»//npm.acme.io/:_authToken={uuid.UUID(int=rng.getrandbits(128), version=4)}\n",
            ),
            (
                ".npmrc",
                f"//npm.acme.io/:username={u}\n»//npm.acme.io/:_password={base64.b64encode(p.encode()).decode()}\n",
            ),
            (".npmrc", f"»_auth={auth}\nalways-auth=true\n"),
            (
                ".pypirc",
                f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\n»password = {pypi(rng)}\n",
            ),
            (
                ".pypirc",
                f"[internal]\nrepository = https://pypi.acme.io\nusername = {u}\n»password = {p}\n",
            ),
            (
                ".docker/config.json",
                f'{{\n  "auths": {{\n    "registry.acme.io": {{\n»      "auth": "{auth}"\n    }}\n  }}\n}}\n',
            ),
            (
                ".aws/credentials",
                f"[default]\naws_access_key_id = AKIA{chars(rng, B32, 16)}\n»aws_secret_access_key = {chars(rng, B64, 40)}\n",
            ),
            (
                ".m2/settings.xml",
                f"<settings><servers><server>\n  <id>nexus</id>\n  <username>{u}</username>\n»  <password>{p}</password>\n</server></servers></settings>\n",
            ),
            (".htpasswd", f"»{u}:$apr1${chars(rng, ALNUM, 8)}${chars(rng, ALNUM + './', 22)}\n"),
        ],
        "connection-string": [
            (".env", f"»DATABASE_URL=postgresql://{u}:{p}@{host}:5432/orders\n"),
            (
                "config/database.yml",
                f"production:\n  adapter: postgresql\n»  url: postgres://{u}:{p2}@{host}/app\n",
            ),
            (
                "src/db.js",
                f"»mongoose.connect('mongodb+srv://{u}:{p}@cluster0.x7k2p.mongodb.net/prod?retryWrites=true');\n",
            ),
            ("app/cache.py", f'»REDIS_URL = "redis://:{p3}@cache.acme-internal.net:6379/0"\n'),
            (
                "celeryconfig.py",
                f'»broker_url = "amqps://{u}:{p}@mq.acme-internal.net:5671/prod"\n',
            ),
            (
                "settings.gradle.properties",
                f"»db.url=jdbc:mysql://{host}:3306/app?user={u}&password={p}\n",
            ),
            (
                "application.yml",
                f"spring:\n  datasource:\n    url: jdbc:postgresql://{host}:5432/app\n    username: {u}\n»    password: {p2}\n",
            ),
            (
                "appsettings.json",
                f'{{"ConnectionStrings": {{\n»  "Default": "Server=tcp:acme.database.windows.net,1433;Database=app;User ID={u};Password={p};Encrypt=true;"\n}}}}\n',
            ),
            (
                "web.config",
                f'<connectionStrings>\n»  <add name="Db" connectionString="Data Source=sql01;Initial Catalog=App;User Id={u};Password={p2};" />\n</connectionStrings>\n',
            ),
            (
                "odbc.ini",
                f"»conn = DRIVER={{ODBC Driver 18 for SQL Server}};SERVER=sql01;UID={u};PWD={p};\n",
            ),
            ("mail.py", f'»SMTP_URL = "smtp://{u}:{p}@smtp.mailprovider.com:587"\n'),
            ("deploy.sh", f"»lftp -e 'mirror -R dist /www' ftp://{u}:{p2}@ftp.acme.io\n"),
            ("ldap.conf", f"»uri ldaps://cn=admin:{p}@ldap.acme.io\n"),
            ("main.go", f'»dsn := "{u}:{p}@tcp({host}:3306)/shop?parseTime=true"\n'),
            (
                "docker-compose.yml",
                f"services:\n  api:\n    environment:\n»      - DB_URL=mysql://{u}:{p}@mysql:3306/app\n",
            ),
        ],
        "command-line": [
            (".bash_history", f"cd app\n»curl -u {u}:{p} https://api.acme.io/v1/items\n"),
            (".zsh_history", f"»curl --user {u}:{p2} -X POST https://ci.acme.io/job/build\n"),
            (
                ".bash_history",
                f"»curl -H 'Authorization: Bearer {p3}{chars(rng, ALNUM, 16)}' https://api.acme.io/me\n",
            ),
            (
                "scripts/fetch.sh",
                f'»curl -s -H "Authorization: Basic {auth}" https://repo.acme.io/pkg.tgz\n',
            ),
            (".bash_history", f"»mysql -h {host} -u root -p{p} shop\n"),
            (".bash_history", f"»PGPASSWORD={p} psql -h {host} -U {u} orders\n"),
            ("deploy.sh", f"»sshpass -p '{p2}' ssh {u}@10.0.4.12 'systemctl restart api'\n"),
            ("fetch.sh", f"»wget --user={u} --password={p} https://files.acme.io/dump.sql.gz\n"),
            ("Makefile", f"login:\n»\tdocker login -u {u} -p {p3} registry.acme.io\n"),
            (
                "src/api.py",
                f'»headers = {{"Authorization": "Bearer {p3}{chars(rng, ALNUM, 16)}"}}\n',
            ),
            (
                "src/api.js",
                f"»fetch(url, {{ headers: {{ Authorization: `Token {chars(rng, HEX, 40)}` }} }});\n",
            ),
            ("Client.java", f'»conn.setRequestProperty("Authorization", "Basic {auth}");\n'),
        ],
        "framework": [
            (
                "mysite/settings.py",
                f"DEBUG = False\n»SECRET_KEY = 'django-insecure-{chars(rng, LO + DIG + '!@#$%^&*(-_=+)', 50)}'\n",
            ),
            (
                "mysite/settings.py",
                f"»SECRET_KEY = '{chars(rng, LO + DIG + '!@#%^&*(-_=+)', 50)}'\n",
            ),
            ("config/secrets.yml", f"production:\n»  secret_key_base: {rng.randbytes(64).hex()}\n"),
            ("config/master.key", "»" + rng.randbytes(16).hex() + "\n"),
            (
                ".env",
                f"APP_NAME=Shop\n»APP_KEY=base64:{base64.b64encode(rng.randbytes(32)).decode()}\n",
            ),
            (
                "wp-config.php",
                "<?php\n" + f"define('DB_NAME', 'wp');\n»define('DB_PASSWORD', '{p}');\n",
            ),
            (
                "wp-config.php",
                (
                    "<?php\n"
                    f"»define('AUTH_KEY',         '{chars(rng, ALNUM + '!@#$%^&*()-_[]{}<>~`+=,.;:/?|', 64)}');\n"
                ),
            ),
            (
                "app.py",
                f"app = Flask(__name__)\n»app.config['SECRET_KEY'] = '{rng.randbytes(24).hex()}'\n",
            ),
            (".env", f"»APP_SECRET={rng.randbytes(16).hex()}\n"),
            (
                "application.properties",
                f"spring.datasource.username={u}\n»spring.datasource.password={p}\n",
            ),
            (
                "web.config",
                f'»<machineKey validationKey="{rng.randbytes(64).hex().upper()}" decryptionKey="{rng.randbytes(24).hex().upper()}" validation="HMACSHA256" decryption="AES" />\n',
            ),
            ("config/jwt.js", f"»module.exports = {{ jwtSecret: '{chars(rng, ALNUM, 32)}' }};\n"),
        ],
        "generic": [
            ("config.yaml", f"database:\n  host: {host}\n  user: {u}\n»  password: {p}\n"),
            ("config.ini", f"[db]\nuser = {u}\n»password = {p2}\n"),
            ("config.toml", f'[api]\n»secret = "{p3}"\n'),
            ("settings.json", f'{{\n  "user": "{u}",\n»  "password": "{p}"\n}}\n'),
            (
                "main.tf",
                f'resource "aws_db_instance" "db" {{\n  username = "{u}"\n»  password = "{p2}"\n}}\n',
            ),
            ("Dockerfile", f"FROM node:20\n»ARG NPM_AUTH_SECRET={p3}\n"),
            ("src/app.py", f'»db = connect(host="{host}", user="{u}", password="{p}")\n'),
            ("src/App.java", f'»String password = "{p}";\n'),
            ("src/index.ts", f"»const apiSecret = '{p3}';\n"),
            ("src/lib.rs", f'»let client_secret = "{p3}";\n'),
            (
                "app.rb",
                f"»ActiveRecord::Base.establish_connection(adapter: 'postgresql', password: '{p}')\n",
            ),
            ("src/db.php", f"»$pdo = new PDO($dsn, '{u}', '{p}');\n"),
            ("app/Config.cs", f'»var creds = new NetworkCredential("{u}", "{p2}");\n'),
            ("pom.xml", f"<properties>\n»  <db.password>{p}</db.password>\n</properties>\n"),
            ("config.xml", f'»<datasource user="{u}" password="{p2}" />\n'),
            (
                "k8s/secret.yaml",
                (
                    "apiVersion: v1\nkind: Secret\ndata:\n"
                    f"»  DB_PASSWORD: {base64.b64encode(p.encode()).decode()}\n"
                ),
            ),
            ("src/auth.go", f'»var clientSecret = "{p3}"\n'),
            (
                "postman_collection.json",
                (
                    '"auth": {\n  "type": "apikey",\n  "apikey": [\n    {\n      "key": "value",\n'
                    f'»      "value": "{chars(rng, ALNUM, 32)}",\n      "type": "string"\n    }},\n'
                    '    {\n      "key": "key",\n      "value": "X-API-Key",\n      "type": "string"\n    }\n  ]\n}\n'
                ),
            ),
            (
                "postman_collection.json",
                (
                    '"auth": {\n  "type": "bearer",\n  "bearer": [\n    {\n      "key": "token",\n'
                    f'»      "value": "{chars(rng, ALNUM, 40)}",\n      "type": "string"\n    }}\n  ]\n}}\n'
                ),
            ),
            (
                "capture.har",
                (
                    '"headers": [\n  {\n    "name": "Authorization",\n'
                    f'»    "value": "Bearer {chars(rng, ALNUM, 40)}"\n  }}\n]\n'
                ),
            ),
            ("logs/server.log", f"»2024-05-02 11:03:12 DEBUG login ok user={u} password={p}\n"),
            (".env", f"»SESSION_SECRET={chars(rng, ALNUM, 40)}\n"),
            ("split.py", f'part1 = "ghp_"\n»TOKEN = part1 + "{chars(rng, ALNUM, 36)}"\n'),
            (
                "src/url.js",
                f"»const url = 'https://api.acme.io/v2/data?api_key={chars(rng, ALNUM, 32)}&fmt=json';\n",
            ),
        ],
    }


def near_files(rng: random.Random) -> list[tuple[str, str]]:
    """Hard near-misses: nothing in these files is a secret."""
    digest = hashlib.sha256(rng.randbytes(8)).hexdigest()
    image = base64.b64encode(rng.randbytes(300)).decode()
    pub = base64.b64encode(b"\x00\x00\x00\x07ssh-rsa" + rng.randbytes(270)).decode()
    cert = base64.b64encode(rng.randbytes(600)).decode()
    return [
        (
            "package-lock.json",
            f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}",\n',
        ),
        (
            "yarn.lock",
            f'  resolved "https://registry.yarnpkg.com/a/-/a-1.0.0.tgz#{rng.randbytes(20).hex()}"\n',
        ),
        ("go.sum", f"golang.org/x/net v0.23.0 h1:{base64.b64encode(rng.randbytes(32)).decode()}\n"),
        ("Cargo.lock", f'checksum = "{digest}"\n'),
        ("poetry.lock", f'{{file = "x-1.0.tar.gz", hash = "sha256:{digest}"}},\n'),
        ("CHANGELOG.md", f"* fix token refresh ({rng.randbytes(20).hex()})\n"),
        (
            "checksums.txt",
            f"{hashlib.md5(rng.randbytes(8), usedforsecurity=False).hexdigest()}  dist/app.tar.gz\n",
        ),
        ("src/ids.py", f'REQUEST_ID = "{uuid.UUID(int=rng.getrandbits(128), version=4)}"\n'),
        ("src/logo.js", f"const logo = 'data:image/png;base64,{image}';\n"),
        ("id_rsa.pub", f"ssh-rsa {pub} deploy@build\n"),
        (
            "certs/ca.crt",
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(cert[i : i + 64] for i in range(0, len(cert), 64))
            + "\n-----END CERTIFICATE-----\n",
        ),
        (
            "docs/aws.md",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        ),
        (
            "locales/en.json",
            '{\n  "password": "Password",\n  "password_hint": "Enter your password",\n  "token_expired": "Your session token has expired"\n}\n',
        ),
        ("styles.css", ".btn { color: #1a2b3c; background: #ffcc00; }\n"),
        (
            "dist/app.min.js",
            "var a=function(t){return t.token?t.token.split('.')[0]:null},b=a({token:n.secret});\n",
        ),
        ("src/login.py", "password = getpass.getpass('Password: ')\n"),
        ("src/auth.ts", "const token = await getToken();\nconst password = req.body.password;\n"),
        ("config.yaml", "password: ${DB_PASSWORD}\napi_key: ${API_KEY:-}\n"),
        (
            "settings.py",
            "SECRET_KEY = os.environ['SECRET_KEY']\nPASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']\n",
        ),
        ("values.yaml", 'password: ""\ntoken: null\napiKey: ~\n'),
        (
            ".env.example",
            "DB_PASSWORD=changeme\nAPI_KEY=xxxxxxxxxxxxxxxxxxxxxxxx\nSECRET=<secret>\n",
        ),
        ("tests/test_auth.py", 'def test_login():\n    assert login("user", "password")\n'),
        ("src/model.py", "password_field = models.CharField(max_length=128)\nTOKEN_LENGTH = 32\n"),
        ("README.md", "Connect with `postgres://user:password@localhost:5432/db`.\n"),
        (
            "docker-compose.yml",
            "    environment:\n      POSTGRES_PASSWORD: postgres\n      DATABASE_URL: postgres://postgres:postgres@db:5432/app\n",
        ),
        (
            "src/jwt.test.js",
            "const token = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';\n",
        ),
        ("git.log", f"commit {rng.randbytes(20).hex()}\nAuthor: Dev <dev@acme.io>\n"),
        ("src/colors.ts", "export const palette = { primary: '#3b82f6', secret: '#0f172a' };\n"),
        ("api.py", 'token = request.headers.get("Authorization", "").removeprefix("Bearer ")\n'),
        (
            "src/keys.go",
            'const apiKeyHeader = "X-Api-Key"\nconst tokenURL = "https://oauth2.googleapis.com/token"\n',
        ),
        ("config/storage.json", '{"connection": "UseDevelopmentStorage=true"}\n'),
        (
            "index.html",
            f'<script src="/app.js" integrity="sha384-{base64.b64encode(rng.randbytes(48)).decode()}"></script>\n',
        ),
        ("Gemfile.lock", f"  revision: {rng.randbytes(20).hex()}\n"),
        (
            "terraform.tfvars",
            'db_password = var.db_password\napi_token   = data.vault_generic_secret.api.data["token"]\n',
        ),
    ]


def file_cases(seed: str) -> Iterator[Case]:
    rng = random.Random(f"{seed}-files")
    for family, files in whole_files(rng).items():
        for path, marked in files:
            text, line = _mark(marked)
            yield Case(
                family, f"{path}: {text.splitlines()[line - 1].strip()[:50]}", path, text, line
            )
    for path, text in near_files(rng):
        yield Case("near-misses (files)", f"{path}: {text.splitlines()[0][:50]}", path, text, None)


def independent_corpus(seed: str) -> list[Case]:
    return [*provider_cases(seed), *file_cases(seed)]
