"""Secrets as they appear in real files of many formats: each is found, by the expected rule."""

from __future__ import annotations

import pytest

from spillguard.configuration.rules import builtin_rules
from spillguard.core.models import Fragment, RuleSet
from spillguard.detection.engine import Scanner
from testing.tokens import expand

CASES = [
    (".env", "STRIPE_SECRET_KEY=sk_live_{rand:Aa0:32}", "STRIPE_SECRET_KEY"),
    (
        ".env",
        'DATABASE_URL="postgres://app:{rand:Aa0:20}@db.internal:5432/app"',
        "POSTGRES_CONNECTION_URI",
    ),
    (".env", "SENDGRID_API_KEY=SG.{rand:Aa0_-:22}.{rand:Aa0_-:43}", "SENDGRID_API_KEY"),
    ("deploy.sh", 'export AWS_SECRET_ACCESS_KEY="{rand:b64:40}"', "AWS_SECRET_ACCESS_KEY"),
    ("deploy.sh", "export AWS_ACCESS_KEY_ID=AKIA{rand:A2:16}", "AWS_CLIENT_ID"),
    ("ci.yml", "      GITHUB_TOKEN: ghp_{rand:Aa0:30}{crc32}", "GITHUB_PAT"),
    (
        "ci.yml",
        "    SLACK_WEBHOOK: https://hooks.slack.com/services/T{rand:A0:8}/B{rand:A0:10}/{rand:Aa0:24}",
        "SLACK_WEBHOOK_URL",
    ),
    ("secret.yaml", "  password: {rand:Aa0:16}", "GENERIC_PASSWORD"),
    ("values.yaml", '  apiKey: "{rand:Aa0:32}"', "GENERIC_API_KEY"),
    ("config.json", '  "client_secret": "{rand:Aa0_-:40}",', "GENERIC_CLIENT_SECRET"),
    (
        "appsettings.json",
        '  "Default": "Server=db;Database=app;User Id=app;Password={rand:Aa0:16};"',
        "ADO_CONNECTION_STRING",
    ),
    ("settings.xml", "      <password>{rand:Aa0:14}</password>", "GENERIC_PASSWORD"),
    ("app.ini", "password = {rand:Aa0:12}", "GENERIC_PASSWORD"),
    ("app.properties", "spring.datasource.password={rand:Aa0:12}", "GENERIC_PASSWORD"),
    ("main.tf", '  password = "{rand:Aa0:16}"', "GENERIC_PASSWORD"),
    (
        "client.py",
        'client = OpenAI(api_key="sk-proj-{rand:Aa0_-:74}T3BlbkFJ{rand:Aa0_-:74}")',
        "OPENAI_API_KEY",
    ),
    ("client.py", 'stripe.api_key = "sk_live_{rand:Aa0:24}"', "STRIPE_SECRET_KEY"),
    (
        "client.py",
        'requests.get(url, headers={{"Authorization": "Bearer {rand:Aa0:40}"}})',
        "BEARER_TOKEN_HEADER",
    ),
    ("main.go", 'apiKey := "{rand:Aa0:32}"', "GENERIC_API_KEY"),
    ("index.js", 'const token = "xoxb-{rand:0:12}-{rand:0:13}-{rand:Aa0:24}";', "SLACK_BOT_TOKEN"),
    ("index.js", "const jwtSecret = '{rand:Aa0:40}';", "GENERIC_SECRET"),
    ("App.java", 'String password = "{rand:Aa0:14}";', "GENERIC_PASSWORD"),
    ("Dockerfile", "ENV API_TOKEN={rand:Aa0:40}", "GENERIC_TOKEN"),
    (".npmrc", "//registry.npmjs.org/:_authToken=npm_{rand:Aa0:30}{crc32}", "NPM_ACCESS_TOKEN"),
    (".pypirc", "password = pypi-AgEIcHlwaS5vcmc{rand:Aa0_-:120}", "PYPI_UPLOAD_TOKEN"),
    (
        "config.json",
        '{{"auths": {{"ghcr.io": {{"auth": "{rand:b64:40}"}}}}}}',
        "DOCKER_CONFIG_AUTH",
    ),
    (
        "id_rsa",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{rand:b64:48}\n{rand:b64:64}\n",
        "RSA_PRIVATE_KEY",
    ),
    (
        "id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{rand:b64:46}\n",
        "SSH_PRIVATE_KEY",
    ),
    (
        "sa.json",
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE{rand:b64:60}\\n",',
        "PKCS8_PRIVATE_KEY",
    ),
    (
        "notes.md",
        "run `curl -u admin:{rand:Aa0:16} https://ci.example.com/api`",
        "CURL_USER_CREDENTIALS",
    ),
    ("bundle.min.js", 'var a=1;var k="AIza{rand:Aa0_-:35}";var b=2;', "GCP_API_KEY"),
    ("Dockerfile", "ENV DB_PASSWORD {rand:Aa0:18}", "DIRECTIVE_SECRET"),
    ("config.h", '#define API_KEY "{rand:Aa0:32}"', "DIRECTIVE_SECRET"),
    ("profile.ps1", '$env:API_KEY = "{rand:Aa0:32}"', "GENERIC_API_KEY"),
    (".env", "ELEVENLABS_API_KEY=sk_{rand:h:48}", "ELEVENLABS_API_KEY"),
    (".env", "PAYMENTS_API_KEY=sk_{rand:h:48}", "GENERIC_API_KEY"),
    ("setup.sh", "redis-cli -h cache -a {rand:Aa0:16} ping", "CLI_PASSWORD_ARGUMENT"),
    ("deploy.sh", "git clone https://{rand:h:40}@github.com/acme/app.git", "GIT_URL_TOKEN"),
    (".env", "DOPPLER_TOKEN=dp.st.prd.{rand:Aa0:43}", "DOPPLER_TOKEN"),
    ("web.config", '<add key="ApiKey" value="{rand:Aa0:32}" />', "GENERIC_CONFIG_SECRET"),
    ("beans.xml", '<property name="password" value="{rand:Aa0:18}"/>', "GENERIC_CONFIG_SECRET"),
    ("wp-config.php", "define('DB_PASSWORD', '{rand:Aa0:18}');", "GENERIC_CONFIG_SECRET"),
    (
        "app.properties",
        "jdbc.url=jdbc:postgresql://db:5432/app?user=app&password={rand:A:1}{rand:0:3}{rand:A:1}{rand:0:3}{rand:a:6}",
        "JDBC_CONNECTION_STRING",
    ),
    (
        "Web.config",
        "Driver={{ODBC Driver 17}};Server=db;UID=sa;PWD={rand:Aa0:18};",
        "ADO_CONNECTION_STRING",
    ),
    (
        ".env",
        "SQLALCHEMY_DATABASE_URI=mssql+pyodbc://sa:{rand:Aa0:18}@db/app?driver=ODBC+Driver+17",
        "DATABASE_URL_CREDENTIALS",
    ),
    (
        ".env",
        "REDIS_URL=rediss://default:{rand:Aa0:18}@cache.example.com:6380",
        "REDIS_CONNECTION_URI",
    ),
    (
        ".env",
        "MONGO_URL=mongodb+srv://admin:{rand:Aa0:18}@cluster0.abcde.mongodb.net/app?retryWrites=true",
        "MONGODB_CONNECTION_URI",
    ),
    (".env", "CELERY_BROKER_URL=amqp://guest:{rand:Aa0:18}@rabbit:5672//", "AMQP_CONNECTION_URI"),
    (".env", "APP_KEY=base64:{rand:b64:43}=", "LARAVEL_APP_KEY"),
    (".env", "TOKEN={rand:Aa0:40}", "GENERIC_TOKEN"),
    (".env", "WEBHOOK_SIGNING_SECRET={rand:h:32}", "GENERIC_SECRET"),
    (".env", "SLACK_SIGNING_SECRET={rand:h:32}", "SLACK_SIGNING_SECRET"),
    (
        "client.js",
        "fetch(`https://api.example.com/v1/q?key={rand:Aa0:40}&lang=en`)",
        "URL_QUERY_SECRET",
    ),
    ("api.js", "headers: {{ Authorization: `Bearer {rand:Aa0:40}` }}", "BEARER_TOKEN_HEADER"),
    (
        "deploy.sh",
        "docker login -u deploy -p {rand:Aa0:18} registry.example.com",
        "DOCKER_LOGIN_PASSWORD",
    ),
    (
        "deploy.sh",
        "echo {rand:Aa0:20} | docker login -u deploy --password-stdin",
        "DOCKER_LOGIN_PASSWORD",
    ),
    (".netrc", "machine api.example.com login deploy password {rand:Aa0:18}", "NETRC_PASSWORD"),
    (".git-credentials", "https://jdoe:{rand:Aa0:18}@bitbucket.org", "URL_CREDENTIALS"),
    (
        "server.key",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQI{rand:b64:20}\n{rand:b64:64}\n",
        "PKCS8_PRIVATE_KEY",
    ),
    (
        "server.key",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,{rand:H:32}\n\n{rand:b64:64}\n",
        "RSA_PRIVATE_KEY",
    ),
    (".env", "MERAKI_DASHBOARD_API_KEY={rand:h:40}", "CISCO_MERAKI_API_KEY"),
    (".env", "NEW_RELIC_LICENSE_KEY={rand:h:40}", "NEW_RELIC_LICENSE_KEY"),
    (
        "settings.py",
        "FACEBOOK_ACCESS_TOKEN = '{rand:0:15}|{rand:Aa0_-:27}'",
        "FACEBOOK_APP_ACCESS_TOKEN",
    ),
]


@pytest.fixture(scope="module")
def scanner() -> Scanner:
    return Scanner(RuleSet(rules=builtin_rules()))


@pytest.mark.parametrize(
    ("path", "template", "rule"), CASES, ids=[f"{path}-{rule}" for path, _, rule in CASES]
)
def test_secret_is_found_by_its_rule(scanner: Scanner, path: str, template: str, rule: str) -> None:
    text = "# settings\n" + expand(template, f"{path}-{rule}") + "\n"
    findings = scanner.scan(Fragment(path=path, text=text))
    assert [(finding.rule, finding.line) for finding in findings] == [(rule, 2)]
