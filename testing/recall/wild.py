"""A third recall corpus, adversarial: secrets written as people really leak them.

Written without reading the rules, from how leaked credentials look in public
repositories: values passed straight to a client's constructor or a function call,
set on a library's attribute, sent in a header dict, given on a command line, left in
a notebook, a log line, a README or a comment; human passwords (``Summer2023!``)
beside random ones; every private key container; connection strings of every driver;
cloud credentials in their own structures; values split from their names by a line
break (Terraform ``default``, ECS and Kubernetes name/value pairs). Near-misses sit
beside them: placeholders, references, hashes, identifiers, public keys, labels,
fixtures, minified code. Every value is generated at run time.
"""

from __future__ import annotations

import base64
import hashlib
import random
import uuid
from typing import TYPE_CHECKING

from testing.recall.families import Case
from testing.recall.independent import (
    ALNUM,
    B64,
    B64U,
    DIG,
    HEX,
    LO,
    UP,
    chars,
    crc_token,
    discord_bot,
    jwt,
    openssh,
    pem,
    pgp,
    putty,
    pypi,
    simple,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


#: (family, token maker, the name people give it, the library's own spelling of it)
#: The library spelling feeds calls such as ``stripe.api_key = ...``.
SERVICES: list[tuple[str, Callable[[random.Random], str], str, str]] = [
    (
        "aws-access-key-id",
        simple("AKIA", (UP.replace("O", "") + "234567", 16)),
        "AWS_ACCESS_KEY_ID",
        "aws_access_key_id",
    ),
    (
        "aws-session-key-id",
        simple("ASIA", (UP + "234567", 16)),
        "AWS_ACCESS_KEY_ID",
        "aws_access_key_id",
    ),
    ("github-classic", crc_token("ghp_"), "GITHUB_TOKEN", "github.token"),
    ("github-fine", simple("github_pat_11", (UP + DIG, 20), "_", (ALNUM, 59)), "GH_TOKEN", "auth"),
    ("github-oauth", crc_token("gho_"), "GITHUB_OAUTH_TOKEN", "token"),
    ("github-refresh", simple("ghr_", (ALNUM, 76)), "GITHUB_REFRESH_TOKEN", "refresh_token"),
    ("gitlab-pat", simple("glpat-", (ALNUM + "_-", 20)), "GITLAB_TOKEN", "private_token"),
    ("gitlab-pipeline-trigger", simple("glptt-", (HEX, 40)), "TRIGGER_TOKEN", "token"),
    ("gitlab-deploy", simple("gldt-", (ALNUM + "_-", 20)), "CI_DEPLOY_PASSWORD", "deploy_token"),
    (
        "gitlab-runner-reg",
        simple("GR1348941", (ALNUM + "_-", 20)),
        "RUNNER_REGISTRATION_TOKEN",
        "registration_token",
    ),
    (
        "slack-bot",
        simple("xoxb-", (DIG, 13), "-", (DIG, 13), "-", (ALNUM, 24)),
        "SLACK_BOT_TOKEN",
        "token",
    ),
    (
        "slack-user",
        simple("xoxp-", (DIG, 12), "-", (DIG, 12), "-", (DIG, 13), "-", (HEX, 32)),
        "SLACK_USER_TOKEN",
        "token",
    ),
    (
        "slack-app",
        simple("xapp-1-A", (UP + DIG, 10), "-", (DIG, 13), "-", (HEX, 64)),
        "SLACK_APP_TOKEN",
        "app_token",
    ),
    (
        "slack-webhook",
        simple(
            "https://hooks.slack.com/services/T",
            (UP + DIG, 8),
            "/B",
            (UP + DIG, 10),
            "/",
            (ALNUM, 24),
        ),
        "SLACK_WEBHOOK_URL",
        "webhook_url",
    ),
    ("stripe-secret", simple("sk_live_51", (ALNUM, 97)), "STRIPE_SECRET_KEY", "stripe.api_key"),
    ("stripe-restricted", simple("rk_live_", (ALNUM, 24)), "STRIPE_API_KEY", "stripe.api_key"),
    ("stripe-webhook", simple("whsec_", (ALNUM, 32)), "STRIPE_WEBHOOK_SECRET", "endpoint_secret"),
    ("twilio-api-key", simple("SK", (HEX, 32)), "TWILIO_API_KEY", "api_key"),
    (
        "sendgrid",
        simple("SG.", (B64U, 22), ".", (B64U, 43)),
        "SENDGRID_API_KEY",
        "sendgrid.api_key",
    ),
    ("mailgun-key", simple("key-", (HEX, 32)), "MAILGUN_API_KEY", "api_key"),
    ("mailchimp", simple((HEX, 32), "-us", (DIG, 2)), "MAILCHIMP_API_KEY", "api_key"),
    (
        "openai-proj",
        simple("sk-proj-", (B64U, 58), "T3BlbkFJ", (B64U, 58)),
        "OPENAI_API_KEY",
        "openai.api_key",
    ),
    (
        "openai-svcacct",
        simple("sk-svcacct-", (B64U, 58), "T3BlbkFJ", (B64U, 58)),
        "OPENAI_API_KEY",
        "openai.api_key",
    ),
    (
        "openai-legacy",
        simple("sk-", (ALNUM, 20), "T3BlbkFJ", (ALNUM, 20)),
        "OPENAI_API_KEY",
        "openai.api_key",
    ),
    ("anthropic", simple("sk-ant-api03-", (B64U, 93), "AA"), "ANTHROPIC_API_KEY", "api_key"),
    ("huggingface", simple("hf_", (UP + LO, 34)), "HUGGINGFACEHUB_API_TOKEN", "token"),
    ("google-api", simple("AIza", (B64U, 35)), "GOOGLE_MAPS_API_KEY", "key"),
    ("google-oauth-secret", simple("GOCSPX-", (B64U, 28)), "GOOGLE_CLIENT_SECRET", "client_secret"),
    ("google-refresh", simple("1//0", (B64U, 99)), "GOOGLE_REFRESH_TOKEN", "refresh_token"),
    ("google-access", simple("ya29.a0", (B64U, 150)), "GOOGLE_ACCESS_TOKEN", "access_token"),
    (
        "firebase-fcm",
        simple("AAAA", (B64U, 7), ":APA91b", (B64U, 134)),
        "FCM_SERVER_KEY",
        "server_key",
    ),
    ("shopify-access", simple("shpat_", (HEX, 32)), "SHOPIFY_ACCESS_TOKEN", "access_token"),
    ("shopify-custom", simple("shpca_", (HEX, 32)), "SHOPIFY_TOKEN", "access_token"),
    ("square-access", simple("EAAA", (B64U, 60)), "SQUARE_ACCESS_TOKEN", "access_token"),
    ("square-oauth-secret", simple("sq0csp-", (B64U, 43)), "SQUARE_APP_SECRET", "client_secret"),
    (
        "paypal-braintree",
        simple("access_token$production$", (LO + DIG, 16), "$", (HEX, 32)),
        "BRAINTREE_ACCESS_TOKEN",
        "access_token",
    ),
    ("discord-bot", discord_bot, "DISCORD_BOT_TOKEN", "token"),
    (
        "discord-webhook",
        simple("https://discord.com/api/webhooks/", (DIG, 19), "/", (B64U, 68)),
        "DISCORD_WEBHOOK_URL",
        "webhook_url",
    ),
    (
        "telegram-bot",
        lambda rng: f"{rng.randrange(10**9, 8 * 10**9)}:AA{chars(rng, B64U, 33)}",
        "TELEGRAM_BOT_TOKEN",
        "token",
    ),
    ("npm", crc_token("npm_"), "NPM_TOKEN", "authToken"),
    ("pypi", pypi, "PYPI_API_TOKEN", "password"),
    ("dockerhub", simple("dckr_pat_", (B64U, 27)), "DOCKERHUB_TOKEN", "password"),
    ("heroku-new", simple("HRKU-AA", (B64U, 58)), "HEROKU_API_KEY", "api_key"),
    ("digitalocean", simple("dop_v1_", (HEX, 64)), "DIGITALOCEAN_ACCESS_TOKEN", "token"),
    ("digitalocean-oauth", simple("doo_v1_", (HEX, 64)), "DO_TOKEN", "token"),
    ("newrelic-user", simple("NRAK-", (UP + DIG, 27)), "NEW_RELIC_API_KEY", "api_key"),
    ("newrelic-license", simple((HEX, 36), "NRAL"), "NEW_RELIC_LICENSE_KEY", "license_key"),
    ("sentry-user", simple("sntryu_", (HEX, 64)), "SENTRY_AUTH_TOKEN", "auth_token"),
    (
        "sentry-org",
        lambda rng: "sntrys_eyJpYXQiOjE3" + chars(rng, B64U, 150) + "_" + chars(rng, B64U, 43),
        "SENTRY_AUTH_TOKEN",
        "auth_token",
    ),
    (
        "atlassian",
        simple("ATATT3xFfGF0", (B64U, 171), "=", (HEX.upper(), 8)),
        "JIRA_API_TOKEN",
        "token",
    ),
    (
        "bitbucket-app",
        simple("ATBB", (ALNUM, 28), (HEX.upper(), 8)),
        "BITBUCKET_APP_PASSWORD",
        "password",
    ),
    ("postman", simple("PMAK-", (HEX, 24), "-", (HEX, 34)), "POSTMAN_API_KEY", "api_key"),
    ("doppler", simple("dp.st.prd.", (ALNUM, 43)), "DOPPLER_TOKEN", "token"),
    ("vault", simple("hvs.", (B64U, 24)), "VAULT_TOKEN", "token"),
    ("vault-batch", simple("hvb.", (B64U, 138)), "VAULT_TOKEN", "token"),
    (
        "terraform-cloud",
        simple((ALNUM, 14), ".atlasv1.", (ALNUM, 67)),
        "TF_TOKEN_app_terraform_io",
        "token",
    ),
    ("linear", simple("lin_api_", (ALNUM, 40)), "LINEAR_API_KEY", "api_key"),
    ("notion-old", simple("secret_", (ALNUM, 43)), "NOTION_API_KEY", "auth"),
    ("notion", simple("ntn_", (DIG, 11), (ALNUM, 35)), "NOTION_TOKEN", "auth"),
    ("airtable-pat", simple("pat", (ALNUM, 14), ".", (HEX, 64)), "AIRTABLE_TOKEN", "api_key"),
    ("dropbox", simple("sl.", (B64U, 135)), "DROPBOX_ACCESS_TOKEN", "oauth2_access_token"),
    ("figma", simple("figd_", (B64U, 40)), "FIGMA_TOKEN", "token"),
    (
        "asana",
        lambda rng: (
            f"2/{rng.randrange(10**15, 10**16)}/{rng.randrange(10**15, 10**16)}:{chars(rng, HEX, 32)}"
        ),
        "ASANA_PAT",
        "access_token",
    ),
    ("databricks", simple("dapi", (HEX, 32)), "DATABRICKS_TOKEN", "token"),
    (
        "grafana-sa",
        simple("glsa_", (ALNUM, 32), "_", (HEX, 8)),
        "GRAFANA_SERVICE_ACCOUNT_TOKEN",
        "token",
    ),
    (
        "grafana-cloud",
        lambda rng: "glc_eyJvIjoi" + chars(rng, B64U, 120),
        "GRAFANA_CLOUD_TOKEN",
        "token",
    ),
    ("sonar", simple("sqp_", (HEX, 40)), "SONAR_TOKEN", "token"),
    ("pulumi", simple("pul-", (HEX, 40)), "PULUMI_ACCESS_TOKEN", "token"),
    ("netlify", simple("nfp_", (ALNUM, 36)), "NETLIFY_AUTH_TOKEN", "token"),
    ("supabase-secret", simple("sb_secret_", (B64U, 31)), "SUPABASE_SECRET_KEY", "key"),
    ("replicate", simple("r8_", (ALNUM, 37)), "REPLICATE_API_TOKEN", "api_token"),
    ("groq", simple("gsk_", (ALNUM, 52)), "GROQ_API_KEY", "api_key"),
    ("xai", simple("xai-", (ALNUM, 80)), "XAI_API_KEY", "api_key"),
    ("perplexity", simple("pplx-", (ALNUM, 48)), "PPLX_API_KEY", "api_key"),
    ("langsmith", simple("lsv2_sk_", (HEX, 32), "_", (HEX, 10)), "LANGSMITH_API_KEY", "api_key"),
    ("pinecone", simple("pcsk_", (ALNUM, 5), "_", (ALNUM, 63)), "PINECONE_API_KEY", "api_key"),
    ("resend", simple("re_", (ALNUM, 8), "_", (ALNUM, 24)), "RESEND_API_KEY", "api_key"),
    ("brevo", simple("xkeysib-", (HEX, 64), "-", (ALNUM, 16)), "BREVO_API_KEY", "api_key"),
    (
        "twitter-bearer",
        simple("AAAAAAAAAAAAAAAAAAAAA", (ALNUM + "%", 90)),
        "TWITTER_BEARER_TOKEN",
        "bearer_token",
    ),
    ("facebook-access", simple("EAAB", (ALNUM, 180)), "FB_ACCESS_TOKEN", "access_token"),
    ("shippo", simple("shippo_live_", (HEX, 40)), "SHIPPO_API_KEY", "api_key"),
    ("contentful", simple("CFPAT-", (B64U, 43)), "CONTENTFUL_MANAGEMENT_TOKEN", "access_token"),
    ("typeform", simple("tfp_", (ALNUM, 44), "_", (ALNUM, 14)), "TYPEFORM_TOKEN", "token"),
    (
        "dynatrace",
        simple("dt0c01.", (UP + DIG, 24), ".", (UP + DIG, 64)),
        "DT_API_TOKEN",
        "api_token",
    ),
    ("hubspot", lambda rng: "pat-eu1-" + _uuid(rng), "HUBSPOT_ACCESS_TOKEN", "access_token"),
    (
        "age",
        simple("AGE-SECRET-KEY-1", ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        "SOPS_AGE_KEY",
        "key",
    ),
    ("jfrog", simple("cmVmdGtuOjAxOjE3", (ALNUM, 48)), "JFROG_ACCESS_TOKEN", "access_token"),
    ("buildkite", simple("bkua_", (HEX, 40)), "BUILDKITE_API_TOKEN", "token"),
    ("rubygems", simple("rubygems_", (HEX, 48)), "GEM_HOST_API_KEY", "api_key"),
    ("planetscale", simple("pscale_pw_", (B64U, 43)), "PLANETSCALE_PASSWORD", "password"),
    ("fly", lambda rng: "FlyV1 fm2_" + chars(rng, B64, 200), "FLY_API_TOKEN", "token"),
    (
        "azure-ad-secret",
        simple((ALNUM, 3), "8Q~", (ALNUM + "_~.-", 31)),
        "AZURE_CLIENT_SECRET",
        "client_secret",
    ),
    ("alibaba", simple("LTAI5t", (ALNUM, 18)), "ALIBABA_CLOUD_ACCESS_KEY_ID", "access_key_id"),
    ("tencent", simple("AKID", (ALNUM, 32)), "TENCENTCLOUD_SECRET_ID", "secret_id"),
    (
        "mapbox-secret",
        lambda rng: "sk.eyJ1IjoiYWNtZS" + chars(rng, ALNUM, 40) + "." + chars(rng, B64U, 22),
        "MAPBOX_ACCESS_TOKEN",
        "access_token",
    ),
    (
        "cloudflare-origin-ca",
        simple("v1.0-", (HEX, 24), "-", (HEX, 146)),
        "CF_ORIGIN_CA_KEY",
        "api_key",
    ),
    ("jwt", jwt, "SUPABASE_SERVICE_ROLE_KEY", "key"),
]

#: Services whose key has no prefix of its own: found only by the name beside it.
UNPREFIXED: list[tuple[str, Callable[[random.Random], str], str, str]] = [
    ("aws-secret", simple((B64, 40)), "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
    ("datadog-api", simple((HEX, 32)), "DD_API_KEY", "api_key"),
    ("datadog-app", simple((HEX, 40)), "DD_APP_KEY", "app_key"),
    ("twilio-auth", simple((HEX, 32)), "TWILIO_AUTH_TOKEN", "auth_token"),
    ("algolia-admin", simple((HEX, 32)), "ALGOLIA_ADMIN_API_KEY", "api_key"),
    ("okta", simple("00", (B64U, 40)), "OKTA_API_TOKEN", "token"),
    ("heroku-uuid", _uuid, "HEROKU_API_KEY", "api_key"),
    ("cloudflare-token", simple((B64U, 40)), "CLOUDFLARE_API_TOKEN", "api_token"),
    ("cloudflare-global", simple((HEX, 37)), "CLOUDFLARE_API_KEY", "api_key"),
    ("azure-devops-pat", simple((LO + "234567", 52)), "AZURE_DEVOPS_PAT", "personal_access_token"),
    ("vercel", simple((ALNUM, 24)), "VERCEL_TOKEN", "token"),
    ("circleci", simple("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)), "CIRCLECI_TOKEN", "token"),
    ("auth0-secret", simple((B64U, 64)), "AUTH0_CLIENT_SECRET", "client_secret"),
    ("pusher-secret", simple((HEX, 20)), "PUSHER_APP_SECRET", "secret"),
    ("twitch-secret", simple((LO + DIG, 30)), "TWITCH_CLIENT_SECRET", "client_secret"),
    ("mapbox-public", simple((ALNUM, 30)), "MAPBOX_SECRET", "secret"),
    ("snyk", _uuid, "SNYK_TOKEN", "token"),
    ("postmark", _uuid, "POSTMARK_SERVER_TOKEN", "server_token"),
    ("segment", simple((ALNUM, 32)), "SEGMENT_WRITE_KEY", "write_key"),
    ("plaid", simple((HEX, 30)), "PLAID_SECRET", "secret"),
    ("coinbase", simple((ALNUM, 32)), "COINBASE_API_SECRET", "api_secret"),
    ("ibm", simple((B64U, 44)), "IBM_CLOUD_API_KEY", "apikey"),
    ("jenkins", simple("11", (HEX, 32)), "JENKINS_API_TOKEN", "api_token"),
    ("mailjet-v3", simple((HEX, 32)), "MJ_APIKEY_PRIVATE", "api_secret"),
]


def camel(env: str) -> str:
    head, *rest = env.lower().split("_")
    return head + "".join(part.title() for part in rest)


#: Contexts where the name beside the value tells what it is. {N} env name, {n} lower,
#: {c} camelCase, {a} the library's attribute, {T} the value.
NAMED = [
    ("app/payments.py", 'import stripe\n\n{a} = "{T}"\n'),
    ("app/client.py", 'client = ApiClient(\n    base_url=BASE,\n    {n}="{T}",\n)\n'),
    ("src/config.ts", 'export default {\n  {c}: "{T}",\n  timeout: 5000,\n} as const;\n'),
    ("config/default.json", '{\n  "{c}": "{T}"\n}\n'),
    ("config.yml", 'integrations:\n  service:\n    {n}: "{T}"\n'),
    ("config.yml", "integrations:\n  service:\n    {n}: {T}\n"),
    (".env", "{N}={T}\n"),
    (".envrc", 'export {N}="{T}"\n'),
    ("deploy/.env.production", "{N}='{T}'\n"),
    ("README.md", "## Setup\n\n```bash\nexport {N}={T}\nnpm start\n```\n"),
    ("notebooks/demo.ipynb", '{\n "cells": [{"source": ["{n} = \'{T}\'\\n"]}]\n}\n'),
    ("main.tf", 'provider "acme" {\n  {n} = "{T}"\n}\n'),
    ("Dockerfile", "FROM node:20-alpine\nARG {N}={T}\nRUN npm ci\n"),
    ("docker-compose.yml", "services:\n  web:\n    environment:\n      {N}: {T}\n"),
    (
        ".github/workflows/deploy.yml",
        "    steps:\n      - uses: acme/deploy@v2\n        with:\n          {n}: {T}\n",
    ),
    ("k8s/deployment.yaml", '        env:\n        - name: {N}\n          value: "{T}"\n'),
    ("application.properties", "acme.{n}={T}\n"),
    ("settings.ini", "[service]\n{n} = {T}\n"),
    ("pyproject.toml", '[tool.acme]\n{n} = "{T}"\n'),
    ("config.php", "<?php\nreturn [\n    '{n}' => '{T}',\n];\n"),
    ("config/initializers/acme.rb", 'Acme.configure do |c|\n  c.{n} = "{T}"\nend\n'),
    ("internal/cfg/cfg.go", 'var cfg = Config{\n\t{c}: "{T}",\n}\n'),
    ("src/main/java/App.java", '    private String {c} = "{T}";\n'),
    ("appsettings.Development.json", '{\n  "Acme": {\n    "{c}": "{T}"\n  }\n}\n'),
    ("scripts/run.sh", "{N}={T} python3 worker.py\n"),
    ("Jenkinsfile", "environment {\n    {N} = '{T}'\n}\n"),
    ("app.js", 'const {c} = "{T}"; // TODO move to env\n'),
    ("settings.py", "{N} = '{T}'  # prod\n"),
    ("ansible/group_vars/all.yml", '{n}: "{T}"\n'),
    ("src/App.kt", 'private const val {N} = "{T}"\n'),
    ("local.settings.json", '{\n  "Values": {\n    "{N}": "{T}"\n  }\n}\n'),
    ("values.yaml", "secrets:\n  {c}: {T}\n"),
]

#: Contexts with nothing telling beside the value: only a self-identifying token is found.
NAMELESS = [
    ("bot.py", 'bot.run("{T}")\n'),
    ("app/client.py", 'client = Client("{T}")\n'),
    ("index.js", "const api = new Api('{T}');\n"),
    ("src/http.py", 'resp = requests.get(URL, headers={{"Authorization": "Bearer {T}"}})\n'),
    ("src/http.ts", "axios.get(url, { headers: { Authorization: `Bearer {T}` } });\n"),
    ("call.sh", 'curl -sS -H "Authorization: token {T}" https://api.acme.dev/v1/me\n'),
    ("call.sh", "curl -H 'X-API-Key: {T}' https://api.acme.dev/v1/items\n"),
    ("logs/worker.log", "2024-03-11 09:12:44,201 DEBUG sending request auth={T}\n"),
    ("docs/notes.md", "- temporary key for the demo: `{T}`\n"),
    ("src/main.c", 'static const char *k = "{T}";\n'),
    ("deploy.sh", "./cli login --token {T}\n"),
    ("notes.txt", "{T}\n"),
    ("Program.cs", 'var client = new ServiceClient("{T}");\n'),
    ("main.go", 'c := acme.NewClient("{T}")\n'),
    ("test.http", "GET https://api.acme.dev/v1/items\nAuthorization: Bearer {T}\n"),
]


def _fill(template: str, env: str, attr: str, token: str) -> str:
    return (
        template.replace("{{", "\0")
        .replace("}}", "\1")
        .replace("{T}", token)
        .replace("{N}", env)
        .replace("{n}", env.lower())
        .replace("{c}", camel(env))
        .replace("{a}", attr)
        .replace("\0", "{")
        .replace("\1", "}")
    )


def _line_of(text: str, token: str) -> int:
    first = token.splitlines()[0]
    for number, line in enumerate(text.splitlines(), 1):
        if first in line:
            return number
    raise AssertionError(f"not placed: {first[:12]}")


def service_cases(seed: str) -> Iterator[Case]:
    for name, make, env, attr in SERVICES + UNPREFIXED:
        rng = random.Random(f"{seed}-wild-{name}")
        contexts = NAMED + (NAMELESS if (name, make, env, attr) in SERVICES else [])
        for path, template in contexts:
            token = make(rng)
            text = _fill(template, env, attr, token)
            label = f"{path}: {next(t for t in template.splitlines() if '{T}' in t).strip()[:40]}"
            yield Case(f"wild:{name}", label, path, text, _line_of(text, token))


# --- human passwords ----------------------------------------------------------------

_WORDS = [
    "Summer",
    "Winter",
    "Spring",
    "Autumn",
    "Welcome",
    "Monkey",
    "Dragon",
    "Sunshine",
    "Football",
    "Princess",
    "Charlie",
    "Acme",
    "Company",
    "Toronto",
    "Berlin",
    "Galaxy",
    "Shadow",
    "Tiger",
    "Rocket",
    "Orange",
    "Hamburg",
    "Liverpool",
    "Mustang",
    "Falcon",
]


def human_password(rng: random.Random) -> str:
    """A password as people choose them: words, a year, a symbol, leetspeak."""
    word, other = rng.choice(_WORDS), rng.choice(_WORDS)
    leet = word.replace("o", "0").replace("a", "@").replace("e", "3").replace("i", "1")
    shapes = [
        f"{word}{rng.randrange(2015, 2026)}{rng.choice('!@#$')}",
        f"{word}@{rng.randrange(100, 1000)}",
        f"{word.lower()}{rng.randrange(10, 100)}{rng.choice('!#$%&*')}{other}",
        f"{leet}{rng.randrange(1, 100)}!",
        f"{word}{other}{rng.randrange(1, 10)}",
        chars(rng, ALNUM, rng.randrange(8, 13)) + rng.choice("!@#$%^&*"),
        f"{word}_{other.lower()}_{rng.randrange(10, 100)}",
    ]
    return rng.choice(shapes)


PASSWORD_CONTEXTS = [
    (".env", "DB_HOST=db.internal\nDB_USER=app\nDB_PASSWORD={P}\n"),
    (".env", "MYSQL_ROOT_PASSWORD={P}\n"),
    (
        "docker-compose.yml",
        "  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: {P}\n",
    ),
    (
        "docker-compose.yml",
        "    environment:\n      - MSSQL_SA_PASSWORD={P}\n      - ACCEPT_EULA=Y\n",
    ),
    ("config/database.yml", "production:\n  username: deploy\n  password: {P}\n"),
    ("config/database.yml", 'production:\n  username: deploy\n  password: "{P}"\n'),
    (
        "app/db.py",
        'conn = psycopg2.connect(host="10.1.2.3", user="etl", password="{P}", dbname="dw")\n',
    ),
    ("app/db.py", 'conn = pymysql.connect("db01", "root", "{P}", "shop")\n'),
    ("src/db.js", "const pool = mysql.createPool({ host: 'db', user: 'api', password: '{P}' });\n"),
    ("src/mail.js", "auth: {\n  user: 'noreply@acme.io',\n  pass: '{P}'\n}\n"),
    ("application.properties", "spring.datasource.username=app\nspring.datasource.password={P}\n"),
    ("application.yml", "spring:\n  mail:\n    password: {P}\n"),
    (
        "appsettings.json",
        '{\n  "Smtp": {\n    "UserName": "alerts",\n    "Password": "{P}"\n  }\n}\n',
    ),
    ("inventory/hosts.ini", "[web]\n10.0.0.5 ansible_user=admin ansible_ssh_pass={P}\n"),
    ("group_vars/all.yml", "ansible_become_password: {P}\n"),
    ("wp-config.php", "define( 'DB_PASSWORD', '{P}' );\n"),
    ("config.php", "$db_pass = '{P}';\n"),
    ("config.php", '$password = "{P}";\n'),
    ("setup.sql", "CREATE USER 'report'@'%' IDENTIFIED BY '{P}';\n"),
    ("setup.sql", "ALTER USER postgres WITH PASSWORD '{P}';\n"),
    ("Main.java", 'String password = "{P}";\n'),
    ("Db.cs", 'var cs = "Server=sql01;Database=app;User Id=sa;Password={P};";\n'),
    ("backup.sh", "mysqldump -u root -p'{P}' shop > shop.sql\n"),
    ("backup.sh", 'sshpass -p "{P}" scp dump.sql backup@10.0.0.9:/srv\n'),
    ("settings.py", "EMAIL_HOST_PASSWORD = '{P}'\n"),
    ("config.ini", "[smtp]\nuser = alerts\npasswd = {P}\n"),
    ("redis.conf", "requirepass {P}\n"),
    (
        "main.tf",
        'resource "aws_db_instance" "main" {\n  username = "admin"\n  password = "{P}"\n}\n',
    ),
    (
        "pom.xml",
        "<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>{P}</password>\n</server>\n",
    ),
    ("docker-login.sh", 'echo "{P}" | docker login -u acme --password-stdin\n'),
    ("src/test/resources/app.properties", "admin.pass={P}\n"),
    ("k8s/secret.yaml", 'stringData:\n  password: "{P}"\n'),
    ("notebook.ipynb", "{\"source\": [\"conn = connect(user='ds', password='{P}')\\n\"]}\n"),
    ("docs/setup.md", "Log in as `admin` with password `{P}`.\n"),
    ("scripts/seed.js", "await User.create({ email: 'admin@acme.io', password: '{P}' });\n"),
    (".netrc", "machine ftp.acme.io login backup password {P}\n"),
    ("settings.xml", '<add key="SmtpPassword" value="{P}" />\n'),
    ("conn.go", 'db, _ := sql.Open("mysql", "app:{P}@tcp(db:3306)/app")\n'),
    (".env", "ADMIN_PASS={P}\n"),
    ("vars.yml", "db_pass: {P}\n"),
    ("nginx.sh", "htpasswd -b -c /etc/nginx/.htpasswd admin {P}\n"),
    ("cron.sh", "PGPASSWORD='{P}' pg_dump -h db -U app app > /backup/app.sql\n"),
    ("db.php", '$conn = mysqli_connect("localhost", "shop", "{P}", "shop");\n'),
    ("Dao.java", 'conn = DriverManager.getConnection(URL, "app", "{P}");\n'),
    ("provision.sh", "echo '{P}' | sudo -S apt-get install -y nginx\n"),
    ("wpa_supplicant.conf", 'network={\n    ssid="office"\n    psk="{P}"\n}\n'),
    ("map.bat", "net use Z: \\\\fs01\\share /user:ACME\\svc {P}\n"),
    ("jndi.xml", '<entry key="db.password">{P}</entry>\n'),
    ("README.md", "* Password: `{P}`\n"),
    ("config.py", "senha = '{P}'\n"),
    ("app.js", "const pw = '{P}';\n"),
    ("nightly.sh", "sqlplus -s app/{P}@prod @nightly.sql\n"),
    ("directory.py", 'l.simple_bind_s("cn=admin,dc=acme,dc=io", "{P}")\n'),
    (
        "mailer.js",
        "const transporter = nodemailer.createTransport({ auth: { user: 'bot', pass: '{P}' } });\n",
    ),
]


def password_cases(seed: str) -> Iterator[Case]:
    rng = random.Random(f"{seed}-wild-passwords")
    for kind, make in (
        ("human", human_password),
        ("random", lambda r: chars(r, ALNUM + "!#%&*", 16)),
    ):
        for path, template in PASSWORD_CONTEXTS:
            value = make(rng)
            text = template.replace("{P}", value)
            yield Case(
                f"wild-password:{kind}",
                f"{path}: {template.strip()[-50:]}",
                path,
                text,
                _line_of(text, value),
            )


# --- structural families --------------------------------------------------------------


def _mark(text: str) -> tuple[str, int]:
    for number, line in enumerate(text.splitlines(), 1):
        if "»" in line:
            return text.replace("»", ""), number
    raise AssertionError("no marker")


def _wrap(body: str, width: int = 64) -> list[str]:
    return [body[i : i + width] for i in range(0, len(body), width)]


def structural(rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    u, p = "svc_app", chars(rng, ALNUM, 14) + "!" + chars(rng, DIG, 2)
    p2 = chars(rng, ALNUM, 20)
    host = "prod-db.c7x1k2.eu-west-1.rds.amazonaws.com"
    rsa_body = base64.b64encode(
        b"\x30\x82\x04\xa3\x02\x01\x00\x02\x82\x01\x01\x00" + rng.randbytes(1180)
    ).decode()
    enc_rsa = "\n".join(
        [
            "-----BEGIN RSA PRIVATE KEY-----",
            "Proc-Type: 4,ENCRYPTED",
            f"DEK-Info: AES-128-CBC,{rng.randbytes(16).hex().upper()}",
            "",
            *_wrap(rsa_body),
            "-----END RSA PRIVATE KEY-----",
        ]
    )
    ec = "\n".join(
        [
            "-----BEGIN EC PARAMETERS-----",
            "BggqhkjOPQMBBw==",
            "-----END EC PARAMETERS-----",
            "-----BEGIN EC PRIVATE KEY-----",
            *_wrap(base64.b64encode(b"\x30\x77\x02\x01\x01\x04\x20" + rng.randbytes(110)).decode()),
            "-----END EC PRIVATE KEY-----",
        ]
    )
    dsa = "\n".join(
        [
            "-----BEGIN DSA PRIVATE KEY-----",
            *_wrap(base64.b64encode(b"\x30\x82\x01\xbb" + rng.randbytes(440)).decode()),
            "-----END DSA PRIVATE KEY-----",
        ]
    )
    pkcs8 = pem("PRIVATE KEY")(rng)
    ssh2 = "\n".join(
        [
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
            'Comment: "rsa-key-20240101"',
            *_wrap(base64.b64encode(b"?o\xf9\xeb" + rng.randbytes(900)).decode(), 70),
            "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        ]
    )
    putty2 = (
        putty(rng)
        .replace("PuTTY-User-Key-File-3", "PuTTY-User-Key-File-2")
        .replace("Encryption: none", "Encryption: aes256-cbc")
    )
    sa_key = pkcs8.replace("\n", "\\n")
    basic = base64.b64encode(f"{u}:{p}".encode()).decode()
    aws_id = "AKIA" + chars(rng, UP + "234567", 16)
    aws_secret = chars(rng, B64, 40)
    acct_key = base64.b64encode(rng.randbytes(64)).decode()
    sas_sig = (
        base64.b64encode(rng.randbytes(32))
        .decode()
        .replace("+", "%2B")
        .replace("/", "%2F")
        .replace("=", "%3D")
    )
    sb_key = base64.b64encode(rng.randbytes(32)).decode()
    kube_token = jwt(rng)
    return {
        "wild-private-key": [
            ("keys/legacy.pem", "»" + enc_rsa + "\n"),
            ("certs/ec.pem", ec.replace("-----BEGIN EC PRIVATE", "»-----BEGIN EC PRIVATE") + "\n"),
            ("keys/dsa.key", "»" + dsa + "\n"),
            ("keys/id_ecdsa", "»" + openssh(rng) + "\n"),
            ("keys/server.ppk", "»" + putty2 + "\n"),
            ("keys/backup.key", "»" + ssh2 + "\n"),
            ("keys/release.asc", "»" + pgp(rng) + "\n"),
            ("keys/enc.pem", "»" + pem("ENCRYPTED PRIVATE KEY")(rng) + "\n"),
            ("ansible/vars.yml", "deploy_key: |\n  »" + pkcs8.replace("\n", "\n  ") + "\n"),
            ("main.tf", 'resource "tls" "x" {\n  private_key = <<EOF\n»' + dsa + "\nEOF\n}\n"),
            (
                "src/sign.go",
                "const key = `»" + ec.split("-----END EC PARAMETERS-----\n")[1] + "`\n",
            ),
            ("config.json", '{"ssh": {"key": "»' + openssh(rng).replace("\n", "\\n") + '"}}\n'),
            (
                ".github/workflows/ci.yml",
                'env:\n  SSH_KEY: "»' + pkcs8.replace("\n", "\\n") + '"\n',
            ),
            (
                "kubeconfig",
                "users:\n- name: admin\n  user:\n»    client-key-data: "
                + base64.b64encode(pkcs8.encode()).decode()
                + "\n",
            ),
        ],
        "wild-cloud": [
            (
                "sa.json",
                (
                    '{\n  "type": "service_account",\n  "project_id": "data-prod",\n'
                    f'  "private_key_id": "{rng.randbytes(20).hex()}",\n»  "private_key": "{sa_key}\\n",\n'
                    '  "client_email": "etl@data-prod.iam.gserviceaccount.com"\n}\n'
                ),
            ),
            (
                "upload.py",
                f's3 = boto3.client("s3", aws_access_key_id="{aws_id}",\n»    aws_secret_access_key="{aws_secret}")\n',
            ),
            (
                "upload.js",
                f"AWS.config.update({{\n  accessKeyId: '{aws_id}',\n»  secretAccessKey: '{aws_secret}',\n  region: 'us-east-1'\n}});\n",
            ),
            (
                "~/.aws/credentials",
                f"[prod]\naws_access_key_id={aws_id}\n»aws_secret_access_key={aws_secret}\n",
            ),
            (
                "aws.go",
                f'»creds := credentials.NewStaticCredentials("{aws_id}", "{aws_secret}", "")\n',
            ),
            (
                "S3.java",
                f'»BasicAWSCredentials creds = new BasicAWSCredentials("{aws_id}", "{aws_secret}");\n',
            ),
            (
                "aws.tf",
                f'provider "aws" {{\n  access_key = "{aws_id}"\n»  secret_key = "{aws_secret}"\n}}\n',
            ),
            (
                "aws.sh",
                f"aws configure set aws_access_key_id {aws_id}\n»aws configure set aws_secret_access_key {aws_secret}\n",
            ),
            (
                "appsettings.json",
                f'{{\n»  "StorageConnection": "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={acct_key};EndpointSuffix=core.windows.net"\n}}\n',
            ),
            (
                "blob.py",
                f'»url = "https://acmeprod.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig={sas_sig}"\n',
            ),
            (
                ".env",
                f"»AZURE_SERVICEBUS_CONNECTION=Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sb_key}\n",
            ),
            (
                "local.settings.json",
                f'{{"Values": {{\n»  "CosmosDb": "AccountEndpoint=https://acme.documents.azure.com:443/;AccountKey={acct_key};"\n}}}}\n',
            ),
            (
                "eh.cs",
                f'»var conn = "Endpoint=sb://acme-eh.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={sb_key};EntityPath=events";\n',
            ),
            (
                "azure.tf",
                f'provider "azurerm" {{\n  client_id = "{_uuid(rng)}"\n»  client_secret = "{chars(rng, ALNUM, 3)}8Q~{chars(rng, ALNUM + "_~.-", 31)}"\n}}\n',
            ),
            ("kubeconfig", f"users:\n- name: ci\n  user:\n»    token: {kube_token}\n"),
            (
                "az.sh",
                f"»az login --service-principal -u {_uuid(rng)} -p {chars(rng, ALNUM, 3)}8Q~{chars(rng, ALNUM + '_~.-', 31)} --tenant {_uuid(rng)}\n",
            ),
        ],
        "wild-connection": [
            (
                "settings.py",
                f'»DATABASES = {{"default": dj_database_url.parse("postgres://{u}:{p}@{host}:5432/app")}}\n',
            ),
            (
                "config.js",
                f"»const uri = `mongodb+srv://{u}:{p2}@cluster0.q9xzt.mongodb.net/?retryWrites=true&w=majority`;\n",
            ),
            ("ora.py", f'»conn = cx_Oracle.connect("scott/{p2}@orahost:1521/ORCLPDB1")\n'),
            ("db.properties", f"»jdbc.url=jdbc:oracle:thin:scott/{p2}@//orahost:1521/ORCL\n"),
            (
                "neo.py",
                f'»driver = GraphDatabase.driver("neo4j+s://a1b2c3.databases.neo4j.io", auth=("neo4j", "{p2}"))\n',
            ),
            ("es.yml", f'»elasticsearch.hosts: ["https://elastic:{p2}@es01.acme.internal:9200"]\n'),
            (
                "snow.py",
                f'»engine = create_engine("snowflake://{u}:{p}@acme-xy12345/analytics/public")\n',
            ),
            (
                "ch.env",
                f"»CLICKHOUSE_URL=clickhouse://default:{p2}@ch.acme.internal:9000/default\n",
            ),
            (
                "kafka.properties",
                f'sasl.mechanism=PLAIN\n»sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{u}" password="{p2}";\n',
            ),
            (
                "db.go",
                f'»connStr := "host={host} port=5432 user={u} password={p2} dbname=app sslmode=require"\n',
            ),
            (
                "App.config",
                f'<connectionStrings>\n»  <add name="Main" connectionString="Server=sql01;Database=Main;User ID=sa;Password={p2};" providerName="System.Data.SqlClient" />\n</connectionStrings>\n',
            ),
            ("nats.env", f"»NATS_URL=nats://{u}:{p2}@nats.acme.internal:4222\n"),
            ("sftp.py", f'»transport.connect(username="{u}", password="{p2}")\n'),
            (
                "ldap.py",
                f'»conn = ldap3.Connection(server, "cn=admin,dc=acme,dc=io", "{p2}", auto_bind=True)\n',
            ),
            ("influx.env", f"»INFLUXDB_URL=http://admin:{p2}@influx.acme.internal:8086\n"),
            ("couch.js", f"»const nano = require('nano')('https://admin:{p2}@couch.acme.io');\n"),
            (
                "smtp.py",
                f'server = smtplib.SMTP("smtp.office365.com", 587)\n»server.login("alerts@acme.io", "{p2}")\n',
            ),
            ("mq.py", f'»credentials = pika.PlainCredentials("{u}", "{p2}")\n'),
            (
                "redis.py",
                f'»r = redis.Redis(host="cache.acme.internal", port=6379, password="{p2}")\n',
            ),
            ("ftp.py", f'ftp = FTP("ftp.acme.io")\n»ftp.login("{u}", "{p2}")\n'),
        ],
        "wild-auth-headers": [
            ("api.py", f'»headers = {{"Authorization": "Basic {basic}"}}\n'),
            ("api.py", f'»requests.get(url, auth=("{u}", "{p2}"))\n'),
            (
                "api.js",
                f"»fetch(url, {{ headers: {{ 'Authorization': 'Basic ' + '{basic}' }} }});\n",
            ),
            ("api.http", f"POST https://api.acme.io/v1/orders\n»Authorization: Basic {basic}\n"),
            ("api.py", f'»session.headers.update({{"X-Auth-Token": "{chars(rng, ALNUM, 40)}"}})\n'),
            (
                "api.go",
                f'»req.Header.Set("Authorization", "Bearer {chars(rng, ALNUM + "-_", 48)}")\n',
            ),
            ("api.java", f'»request.addHeader("X-API-KEY", "{chars(rng, ALNUM, 32)}");\n'),
            (
                "har.json",
                f'{{"name": "cookie", »"value": "sessionid={chars(rng, LO + DIG, 32)}; csrftoken={chars(rng, ALNUM, 32)}"}}\n',
            ),
            (
                "api.sh",
                f"»curl -X POST https://api.acme.io/v1/send -d 'api_key={chars(rng, ALNUM, 32)}'\n",
            ),
            ("nginx.conf", f'»proxy_set_header Authorization "Basic {basic}";\n'),
            ("api.rb", f'»conn.headers["Authorization"] = "Token token={chars(rng, HEX, 40)}"\n'),
            ("api.ps1", f'»$headers = @{{ "Authorization" = "Bearer {chars(rng, ALNUM, 40)}" }}\n'),
        ],
        "wild-split": [
            (
                "variables.tf",
                f'variable "db_password" {{\n  type    = string\n»  default = "{p2}"\n}}\n',
            ),
            (
                "variables.tf",
                f'variable "api_token" {{\n  description = "token"\n»  default     = "{chars(rng, ALNUM, 40)}"\n}}\n',
            ),
            (
                "task-definition.json",
                f'{{"environment": [\n  {{\n    "name": "DB_PASSWORD",\n»    "value": "{p2}"\n  }}\n]}}\n',
            ),
            (
                "task-definition.json",
                f'{{"environment": [\n  {{\n»    "value": "{p2}",\n    "name": "DB_PASSWORD"\n  }}\n]}}\n',
            ),
            (
                "deploy.yaml",
                f"        env:\n          - name: API_SECRET\n»            value: {chars(rng, ALNUM, 32)}\n",
            ),
            ("cfn.yaml", f"Parameters:\n  DbPassword:\n    Type: String\n»    Default: {p2}\n"),
            (
                "pipeline.yml",
                f"variables:\n  - name: apiToken\n»    value: '{chars(rng, ALNUM, 40)}'\n",
            ),
            ("mail.js", f"»const key = 'key-{chars(rng, HEX, 32)}';\n"),
            ("mail.py", f'»MG_KEY = "key-{chars(rng, HEX, 32)}"\n'),
            ("tok.py", f'»TOKEN = "ghp_" + "{chars(rng, ALNUM, 36)}"\n'),
            ("values.yaml", f"database:\n  auth:\n    username: app\n»    password: {p2}\n"),
            ("secrets.yaml", f"db:\n  password:\n»    {p2}\n"),
            (
                "hardhat.config.js",
                f'  networks: {{\n    mainnet: {{\n»      accounts: ["0x{rng.randbytes(32).hex()}"],\n    }},\n',
            ),
            (".env", f"»DEPLOYER_PRIVATE_KEY=0x{rng.randbytes(32).hex()}\n"),
            (
                "crypto.py",
                f'»cipher = Fernet(b"{base64.urlsafe_b64encode(rng.randbytes(32)).decode()}")\n',
            ),
            ("settings.py", f'»key = "{chars(rng, ALNUM, 32)}"\n'),
        ],
    }


def near_misses(rng: random.Random) -> list[tuple[str, str]]:
    h40, h64 = rng.randbytes(20).hex(), rng.randbytes(32).hex()
    pub_ed = base64.b64encode(
        b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + rng.randbytes(32)
    ).decode()
    img = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(400)).decode()
    font = base64.b64encode(b"wOF2" + rng.randbytes(600)).decode()
    cert = "\n".join(
        [
            "-----BEGIN CERTIFICATE-----",
            *_wrap(base64.b64encode(b"\x30\x82\x03" + rng.randbytes(700)).decode()),
            "-----END CERTIFICATE-----",
        ]
    )
    pubkey = "\n".join(
        [
            "-----BEGIN PUBLIC KEY-----",
            *_wrap(base64.b64encode(b"\x30\x82\x01\x22" + rng.randbytes(280)).decode()),
            "-----END PUBLIC KEY-----",
        ]
    )
    csr = "\n".join(
        [
            "-----BEGIN CERTIFICATE REQUEST-----",
            *_wrap(base64.b64encode(rng.randbytes(500)).decode()),
            "-----END CERTIFICATE REQUEST-----",
        ]
    )
    u1, u2 = _uuid(rng), _uuid(rng)
    return [
        (
            ".env.example",
            "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\nGITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
        ),
        (
            ".env.example",
            "OPENAI_API_KEY=<your-openai-key>\nANTHROPIC_API_KEY=your_anthropic_api_key_here\n",
        ),
        (".env.template", "DB_PASSWORD=changeme\nJWT_SECRET=change-this-secret\nAPI_KEY=\n"),
        (
            "config.py",
            'API_KEY = os.environ["API_KEY"]\nSECRET_KEY = os.environ.get("SECRET_KEY", "")\n',
        ),
        (
            "workflow.yml",
            "      env:\n        NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n        AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}\n",
        ),
        (
            "compose.yml",
            "    environment:\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?required}\n      REDIS_URL: redis://:${REDIS_PASSWORD}@redis:6379\n",
        ),
        (
            "helm/templates/deploy.yaml",
            "        - name: API_TOKEN\n          valueFrom:\n            secretKeyRef:\n              name: api\n              key: token\n",
        ),
        ("terraform.tf", 'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n'),
        (
            "README.md",
            "Create a token at https://github.com/settings/tokens and run `export GITHUB_TOKEN=<token>`.\n",
        ),
        (
            "docs/api.md",
            '```\ncurl -H "Authorization: Bearer $API_TOKEN" https://api.acme.io/v1/me\n```\n',
        ),
        ("docs/api.md", "Authorization: Bearer YOUR_ACCESS_TOKEN\n"),
        (
            "package-lock.json",
            f'"resolved": "https://registry.npmjs.org/x/-/x-1.2.3.tgz",\n"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"\n',
        ),
        (
            "pnpm-lock.yaml",
            f"  /left-pad@1.3.0:\n    resolution: {{integrity: sha512-{base64.b64encode(rng.randbytes(64)).decode()}}}\n",
        ),
        (
            "go.sum",
            f"github.com/acme/x v1.2.0/go.mod h1:{base64.b64encode(rng.randbytes(32)).decode()}\n",
        ),
        ("requirements.txt", f"requests==2.32.3 --hash=sha256:{h64}\n"),
        (
            "flake.lock",
            f'"narHash": "sha256-{base64.b64encode(rng.randbytes(32)).decode()}",\n"rev": "{h40}",\n',
        ),
        ("Dockerfile", f"FROM python@sha256:{h64}\n"),
        ("CHANGELOG.md", f"- Merged {h40[:7]}: rotate API key handling ({h40})\n"),
        ("src/ids.ts", f"export const TENANT_ID = '{u1}';\nexport const CLIENT_ID = '{u2}';\n"),
        ("app.py", f'app_id = "{u1}"\nsort_key = "created_at"\nprimary_key = "id"\n'),
        (
            "src/keys.py",
            'api_key_header_name = "X-API-Key"\nAPI_KEY_PREFIX = "sk_live_"\nTOKEN_URL = "https://oauth2.googleapis.com/token"\n',
        ),
        (
            "keyboard.js",
            "const keyboardLayout = 'qwertyuiopasdfghjklzxcvbnm';\nconst keyMap = { Enter: 13, Escape: 27 };\n",
        ),
        ("assets/logo.css", f".logo {{ background: url(data:image/png;base64,{img}); }}\n"),
        (
            "assets/fonts.css",
            f"@font-face {{ src: url(data:font/woff2;base64,{font}) format('woff2'); }}\n",
        ),
        ("id_ed25519.pub", f"ssh-ed25519 {pub_ed} dev@laptop\n"),
        ("certs/server.crt", cert + "\n"),
        ("certs/jwt-public.pem", pubkey + "\n"),
        ("certs/req.csr", csr + "\n"),
        (
            "tests/test_client.py",
            'def test_auth():\n    client = Client(api_key="test-api-key-1234")\n    token = "fake-token-for-tests"\n',
        ),
        ("tests/fixtures/users.json", '[{"email": "a@example.com", "password": "password123"}]\n'),
        ("spec/auth_spec.rb", "let(:password) { 'secret' }\nlet(:token) { 'dummy_token' }\n"),
        (
            "locales/de.json",
            '{"password": "Passwort", "forgot_password": "Passwort vergessen?", "api_key_label": "API-Schlüssel"}\n',
        ),
        (
            "locales/fr.yml",
            "fr:\n  password: Mot de passe\n  password_confirmation: Confirmer le mot de passe\n",
        ),
        ("policy.md", "Passwords must be at least 12 characters and contain one of !@#$%^&*.\n"),
        (
            "login.html",
            '<label for="password">Password</label>\n<input type="password" name="password" placeholder="••••••••" autocomplete="current-password">\n',
        ),
        ("theme.scss", "$primary: #6f42c1;\n$secret-color: #e83e8c;\n$token-bg: #f8f9fa;\n"),
        (
            "vendor.min.js",
            "!function(e){var t={};function n(r){if(t[r])return t[r].exports;var o=t[r]={i:r,l:!1,exports:{}};return e[r].call(o.exports,o,o.exports,n),o.l=!0,o.exports}n.m=e,n.c=t,n.d=function(e,t,r){n.o(e,t)||Object.defineProperty(e,t,{enumerable:!0,get:r})}}([]);\n",
        ),
        (
            "src/auth.ts",
            "const password = await bcrypt.hash(input.password, 12);\nconst token = jwt.sign(payload, process.env.JWT_SECRET!);\n",
        ),
        (
            "src/Auth.java",
            'String password = request.getParameter("password");\nString token = authService.issueToken(user);\n',
        ),
        ("db/migrate/001.rb", "t.string :password_digest\nt.string :api_key, index: true\n"),
        (
            "settings.py",
            "AUTH_PASSWORD_VALIDATORS = [{'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator'}]\n",
        ),
        (
            "billing/.env",
            "# test mode only: not a production credential\nSTRIPE_SECRET_KEY=sk_test_51"
            + chars(rng, ALNUM, 97)
            + "\n",
        ),
        (
            "docs/stripe.md",
            "Use the test key `sk_test_4eC39HqLyjWDarjtT1zdp7dc` from Stripe's docs.\n",
        ),
        (
            "docs/aws.md",
            "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        ),
        (
            "azurite.env",
            "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;\n",
        ),
        ("git.txt", f"commit {h40}\nMerge: {h40[:7]} {h64[:7]}\n"),
        (
            "sums.txt",
            f"SHA256 ({'app.tar.gz'}) = {h64}\nMD5 = {hashlib.md5(rng.randbytes(4), usedforsecurity=False).hexdigest()}\n",
        ),
        (
            "deploy.yml",
            "password: \"{{ vault_db_password }}\"\napi_token: \"{{ lookup('env', 'API_TOKEN') }}\"\n",
        ),
        (
            "app.config",
            '<add key="ApiKey" value="#{ApiKey}#" />\n<add key="Password" value="__DB_PASSWORD__" />\n',
        ),
        (
            "k8s/sealed.yaml",
            "kind: SealedSecret\nspec:\n  encryptedData:\n    password: "
            "AgB" + chars(rng, B64, 400) + "\n",
        ),
        (
            "sops.yaml",
            "password: ENC[AES256_GCM,data:"
            + chars(rng, B64, 24)
            + ",iv:"
            + chars(rng, B64, 43)
            + "=,tag:"
            + chars(rng, B64, 22)
            + "==,type:str]\n",
        ),
        ("mock.py", "MOCK_SECRET = 'mock-secret-value'\nEXAMPLE_TOKEN = 'example-token'\n"),
        ("client.py", "token = None\npassword = ''\napi_key = getpass('API key: ')\n"),
        (
            "cli.py",
            "parser.add_argument('--password', help='the password to use')\nparser.add_argument('--api-key', default=None)\n",
        ),
        (
            "strings.xml",
            '<string name="password_hint">Enter password</string>\n<string name="token_error">Token invalid</string>\n',
        ),
        ("routes.rb", "get 'password/reset/:token', to: 'passwords#edit'\n"),
        (
            "schema.graphql",
            "type Mutation {\n  login(email: String!, password: String!): AuthPayload\n  refreshToken(token: String!): AuthPayload\n}\n",
        ),
        (
            "openapi.yaml",
            "components:\n  securitySchemes:\n    ApiKeyAuth:\n      type: apiKey\n      in: header\n      name: X-API-KEY\n",
        ),
        ("README.md", "docker run -e POSTGRES_PASSWORD=mysecretpassword -d postgres\n"),
        ("jwt.md", "Decode `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9` to see the header.\n"),
        ("webpack.lock", f"  contenthash: {h40[:20]}\n  chunkhash: {h64[:32]}\n"),
        (
            "tracking.js",
            f"gtag('config', 'G-{chars(rng, UP + DIG, 10)}');\nconst sessionId = '{chars(rng, LO + DIG, 32)}';\n",
        ),
        (
            "build.gradle",
            "versionCode 42\nsigningConfig signingConfigs.release\nstorePassword System.getenv('STORE_PASSWORD')\n",
        ),
        (
            "firebase.js",
            f"const firebaseConfig = {{\n  authDomain: 'acme-app.firebaseapp.com',\n  projectId: 'acme-app',\n  appId: '1:{rng.randrange(10**11, 10**12)}:web:{rng.randbytes(11).hex()}',\n}};\n",
        ),
        (
            "settings.py",
            "PASSWORD_RESET_TIMEOUT = 259200\nSESSION_COOKIE_NAME = 'sessionid'\nCSRF_TOKEN_HEADER = 'X-CSRFToken'\n",
        ),
        (
            "secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata: {}\n",
        ),
        (
            "hardhat.config.js",
            "accounts: [`0x${process.env.PRIVATE_KEY}`],\nmnemonic: 'test test test test test test test test test test test junk'\n",
        ),
        ("crypto.py", "key = Fernet.generate_key()\ncipher = Fernet(key)\n"),
        ("redis.conf", "# requirepass foobared\nmaxmemory 2gb\n"),
        ("schema.sql", "CREATE USER app WITH PASSWORD :'app_password';\n"),
        ("i18n.js", "const keys = [{ key: 'nav.home.title' }, { key: 'nav.settings.title' }];\n"),
        ("cache.py", f'key = "{h40[:32]}"\nidempotency_key = "{chars(rng, ALNUM, 32)}"\n'),
        (
            "settings.py",
            "SECRET_KEY_FALLBACKS = []\nAPI_KEY_HEADER_NAME = 'X-API-Key'\nTOKEN_ENDPOINT_URL = 'https://login.acme.io/oauth2/token'\n",
        ),
        (
            "variables.tf",
            'variable "db_password" {\n  type    = string\n  default = null\n}\nvariable "region" {\n  default = "eu-west-1"\n}\n',
        ),
        ("wpa_supplicant.conf", 'network={\n    ssid="office"\n    psk="YOUR_WIFI_PASSWORD"\n}\n'),
        ("deploy.bat", "net use Z: \\\\fs01\\share /user:ACME\\svc *\n"),
    ]


def file_cases(seed: str) -> Iterator[Case]:
    rng = random.Random(f"{seed}-wild-files")
    for family, files in structural(rng).items():
        for path, marked in files:
            text, line = _mark(marked)
            yield Case(
                family, f"{path}: {text.splitlines()[line - 1].strip()[:50]}", path, text, line
            )
    for path, text in near_misses(rng):
        yield Case(
            "wild near-misses (files)", f"{path}: {text.splitlines()[0][:50]}", path, text, None
        )


def near_service_cases(seed: str) -> Iterator[Case]:
    """Each prefixed service's shape in placeholder form, in a few named contexts."""
    for name, make, env, attr in SERVICES:
        rng = random.Random(f"{seed}-wild-near-{name}")
        real = make(rng)
        other = make(rng)
        shared = next((i for i, (a, b) in enumerate(zip(real, other, strict=False)) if a != b), 0)
        prefix = real[: max(3, shared)]
        values = [
            prefix + "x" * max(8, len(real) - len(prefix)),
            prefix + "<your-key>",
            prefix + "...",
        ]
        for value in values:
            for path, template in (NAMED[0], NAMED[6], NAMED[4]):
                yield Case(
                    f"wild:{name}",
                    f"near {path}: {value[:30]}",
                    path,
                    _fill(template, env, attr, value),
                    None,
                )


def wild_corpus(seed: str) -> list[Case]:
    return [
        *service_cases(seed),
        *password_cases(seed),
        *file_cases(seed),
        *near_service_cases(seed),
    ]
