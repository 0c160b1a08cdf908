"""A fourth recall corpus: the long tail, written as people write it.

The other corpora name services the rules know. This one is written from the shapes
a leaked credential takes when nobody wrote a rule for its service: a made-up
vendor's word beside a secret word and a random value (``ACME_KEY=``, ``acmeToken``,
``dd-apikey-``, ``[acme]`` over ``key =``, a log line's ``using key=``, a note's
``Acme token - ...``), values handed to a client by position (constructors,
``auth=(user, token)``, ``curl -u``, ``psexec -p``, PowerShell ``-Password``),
human passwords with punctuation in URLs and connection strings, cloud keys in fields
of their own, credentials in the files tools write (``.pgpass``, SQL dumps, FTP
clients' server lists, shadow files, Jenkins' credentials.xml) and webhook or signed
URLs. Hard near-misses sit beside them: digests where the text says they are
digests (RECORD files, SHA256SUMS, lock files, ``sha256:``), commit ids, request
ids, i18n keys, placeholders, references and test fixtures. A line whose text
starts with ``§`` holds the secret; every value is generated at run time.
"""

from __future__ import annotations

import base64
import random
import uuid
from typing import TYPE_CHECKING

from testing.recall.families import Case
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Iterator

H32 = "{rand:h:32}"
H40 = "{rand:h:40}"
B62 = "{rand:Aa0:40}"
B62S = "{rand:Aa0:24}"
B64U = "{rand:Aa0_-:43}"
PW = "{rand:Aa0:10}!"

#: (family, path, text): one positive case each.
POSITIVES: list[tuple[str, str, str]] = [
    # ---------------------------------------------------------- a service word near a token
    ("proximity", ".env", f"§ACME_KEY={H32}"),
    ("proximity", ".env", f"§FOO_TOKEN={B62}"),
    ("proximity", "config/settings.py", f'§WIDGETLY_TKN = "{B62S}{B62S}"'),
    ("proximity", "src/client.js", f"§const acmeKey = '{B62}';"),
    ("proximity", "src/client.ts", f'§  acmeToken: "{B64U}",'),
    ("proximity", "app/config.rb", f"§  config.zorbly_access = '{H40}'"),
    ("proximity", "README.md", f"§Zapdash KEY {H32}"),
    ("proximity", "NOTES.txt", f"§quilt token - {B62}"),
    ("proximity", "docs/setup.md", f"§- Brightwave api: `{B62S}{H32}`"),
    ("proximity", "notes.txt", f"§acmeKEY-{B62S}{B62S}"),
    ("proximity", "ops/keys.txt", f"§dd-apikey-{H32}"),
    ("proximity", "deploy.ini", f"[pelican]\nurl = https://api.pelican.io\n§key = {H32}\n"),
    ("proximity", "settings.cfg", f"[tallyho]\n§token = {B62}\n"),
    ("proximity", "logs/app.log", f"§2024-03-02 10:11:02 [DEBUG] using key={H40}"),
    ("proximity", "logs/worker.log", f"§[INFO] auth ok, token {B62} accepted"),
    ("proximity", "debug.txt", f"§DEBUG:client:Sending request with apikey {H32}"),
    ("proximity", "logs/sync.log", f"§[DEBUG] using key: {H32}"),
    ("proximity", "HANDOFF.md", f"§The token for quillon is {B62S}{H32}"),
    ("proximity", "config.yaml", f"vendors:\n  kestrel:\n§    secret: {B62}\n"),
    ("proximity", "config.json", f'{{\n  "orbit": {{\n§    "privateKey": "{B64U}"\n  }}\n}}'),
    ("proximity", "main.go", f'§const glimmerPass = "{B62S}"'),
    ("proximity", "App.java", f'§    private static final String NIMBUS_AUTH = "{H40}";'),
    ("proximity", "app.py", f'§headers = {{"X-Fable-Key": "{H32}"}}'),
    ("proximity", "script.sh", f"§export MYVENDOR_APIKEY={B62}"),
    ("proximity", "Program.cs", f'§var zentraCredential = "{B62}";'),
    ("proximity", "keys.md", f"Parcelport\n§{H40}\n"),
    ("proximity", "secrets.txt", f"§HALCYON ACCESS {B62}"),
    ("proximity", "app.properties", f"§saasco.api.tkn={B62}"),
    (
        "proximity",
        ".env",
        "§ACME_API_KEY={rand:h:8}-{rand:h:4}-4{rand:h:3}-a{rand:h:3}-{rand:h:12}",
    ),
    ("proximity", "config.toml", f'[services.lumen]\n§api_token = "{B62S}.{B62S}"'),
    ("proximity", "client.py", f"§Lumen(key='{H32}')"),
    # ---------------------------------------------------------- positional credentials
    ("positional", "send_sms.py", '§client = Client("AC{rand:h:32}", "{rand:h:32}")'),
    ("positional", "fetch.py", f'§r = requests.get(url, auth=("deploy", "{B62S}"))'),
    ("positional", "es.py", f'§es = Elasticsearch(hosts, basic_auth=("elastic", "{PW}"))'),
    ("positional", "bot.py", f'§api.login("svc-bot", "{PW}", "{H32}")'),
    (
        "positional",
        "Mailer.cs",
        f'§smtp.Credentials = new NetworkCredential("mailer@corp.example", "{PW}");',
    ),
    ("positional", "deploy.sh", f"§curl -u admin:{PW} https://ci.corp.example/api/json"),
    ("positional", "deploy.sh", f"§curl --user deploy:{B62S} -X POST https://artifacts.example/up"),
    (
        "positional",
        "release.sh",
        (
            f"curl -X POST https://api.vendor.example/v1/releases \\\n"
            f'§  -H "Authorization: Bearer {B62}" \\\n  -d @payload.json\n'
        ),
    ),
    ("positional", "run.bat", f"§psexec \\\\srv01 -u CORP\\admin -p {PW} cmd /c ipconfig"),
    (
        "positional",
        "mount.ps1",
        f"§New-PSDrive -Name X -Root \\\\fs\\share -User corp\\svc -Password {PW}",
    ),
    ("positional", "connect.ps1", f'§Connect-VIServer -Server vc01 -User admin -Password "{PW}"'),
    ("positional", "ftp.py", f'§ftp.login("upload", "{PW}")'),
    ("positional", "mail.py", f'§server.login("alerts@corp.example", "{PW}")'),
    ("positional", "db.py", f"§conn = pymysql.connect('db', 'app', '{PW}', 'shop')"),
    # ---------------------------------------------------------- passwords with punctuation
    ("punctuation", ".env", "§DATABASE_URL=postgres://app:Pa.ss~w0rd{rand:0:3}@db.internal/app"),
    ("punctuation", "settings.py", "§BROKER = 'amqp://worker:Tr!cky{rand:0:4}#x@mq.local//'"),
    ("punctuation", "db.yml", "§  url: mysql://root:s3cure.{rand:a:4}!@localhost:3306/shop"),
    ("punctuation", "README.md", "§    psql postgresql://admin:Hunter{rand:0:4}.@localhost/app"),
    (
        "punctuation",
        "appsettings.json",
        '§  "Default": "Server=sql01;Database=App;User Id=sa;Password=Winter{rand:0:4}!;"',
    ),
    (
        "punctuation",
        "web.config",
        (
            '§<add name="Db" connectionString="Data Source=.;Initial Catalog=Shop;'
            'User ID=web;Pwd=Spring{rand:0:4}#;" />'
        ),
    ),
    (
        "punctuation",
        "odbc.ini",
        "§DSN=Sales;Driver={ODBC Driver 18};Server=db;UID=report;PWD=Rep0rt.{rand:0:4}",
    ),
    ("punctuation", "config.py", '§db_password = "P@ssw0rd{rand:0:4}"'),
    ("punctuation", "docker-compose.yml", "§      MYSQL_ROOT_PASSWORD: Summer{rand:0:4}!"),
    ("punctuation", "settings.ini", "§admin_pass = Tr0ub{rand:a:4}&{rand:0:1}"),
    ("punctuation", "app.env", "§SMTP_PASS=welcome{rand:0:3}"),
    ("punctuation", "ansible.yml", "§ansible_password: 'Dragon{rand:0:2}~{rand:0:2}'"),
    # ---------------------------------------------------------- cloud keys in their own field
    (
        "cloud",
        "storage.json",
        '{\n  "accountName": "prodlogs",\n§  "accountKey": "{rand:b64:86}=="\n}',
    ),
    ("cloud", "storage.py", 'ACCOUNT = "prodlogs"\n§PRIMARY_KEY = "{rand:b64:86}=="'),
    ("cloud", "Storage.cs", '§const string StorageKey = "{rand:b64:86}==";'),
    ("cloud", "token.json", '§{"refresh_token": "0.A{rand:Aa0_-:60}.{rand:Aa0_-:40}"}'),
    ("cloud", "cache.txt", "§refresh: 1.A{rand:Aa0_-:70}.{rand:Aa0_-:30}"),
]


def _docker_auths(rng: random.Random) -> str:
    pair = f"ci-bot:{''.join(rng.choice('abcdefghkmnpqrstuvwxyz23456789') for _ in range(20))}"
    auth = base64.b64encode(pair.encode()).decode()
    return f'§  "dockerconfigjson": "{{\\"auths\\":{{\\"registry.corp.example\\":{{\\"auth\\":\\"{auth}\\"}}}}}}"'


#: Families whose text needs more than a template (computed values).
def _computed(rng: random.Random) -> list[tuple[str, str, str]]:
    user = uuid.UUID(int=rng.getrandbits(128), version=4)
    tenant = uuid.UUID(int=rng.getrandbits(128), version=4)
    group = uuid.UUID(int=rng.getrandbits(128), version=4)
    return [
        ("cloud", "k8s/secret.json", _docker_auths(rng)),
        # ------------------------------------------------------ well-known files and dumps
        ("files", ".pgpass", "§db.internal:5432:app:app_user:{rand:Aa0:14}"),
        (
            "files",
            "dump.sql",
            (
                "INSERT INTO `users` (`id`, `login`, `password`) VALUES\n"
                "§(1, 'admin', 'Adm1n{rand:0:4}!'),\n(2, 'ops', 'Ops{rand:0:4}#x');"
            ),
        ),
        (
            "files",
            "sitemanager.xml",
            (
                "<FileZilla3>\n <Servers>\n  <Server>\n   <Host>ftp.corp.example</Host>\n"
                "   <User>upload</User>\n"
                '§   <Pass encoding="base64">{rand:b64:20}</Pass>\n  </Server>\n'
            ),
        ),
        (
            "files",
            "recentservers.xml",
            "<Server><Host>10.0.0.5</Host><User>web</User>§<Pass>{rand:Aa0:12}</Pass></Server>",
        ),
        ("files", "etc/shadow", "§root:$6${rand:a0:8}${rand:b64:86}:19500:0:99999:7:::"),
        (
            "files",
            "credentials.xml",
            (
                "<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>\n"
                "  <username>deployer</username>\n§  <password>{rand:Aa0:16}</password>\n"
            ),
        ),
        (
            "files",
            "jenkins/credentials.xml",
            (
                "<org.jenkinsci.plugins.plaincredentials.impl.StringCredentialsImpl>\n"
                "  <id>sonar</id>\n§  <secret>{rand:h:40}</secret>\n"
            ),
        ),
        (
            "files",
            "config/mongoid.yml",
            (
                "production:\n  clients:\n    default:\n      database: app\n"
                "      options:\n        user: app\n§        password: {rand:Aa0:16}\n"
            ),
        ),
        (
            "files",
            "config/database.yml",
            "production:\n  adapter: postgresql\n  username: rails\n§  password: Rails{rand:0:4}!\n",
        ),
        (
            "files",
            "settings.py",
            "§SECRET_KEY = '{rand:a0:13})(*&^{rand:a0:13}$#@!{rand:a0:13}=+'",
        ),
        (
            "files",
            "dataSources.xml",
            (
                '<data-source name="prod">\n  <jdbc-url>jdbc:postgresql://db/app</jdbc-url>\n'
                "  <user-name>report</user-name>\n§  <password>{rand:Aa0:14}</password>\n"
            ),
        ),
        (
            "files",
            "connections.json",
            (
                '{"connections": [{"name": "prod", "host": "db", "user": "app",\n'
                '§  "password": "{rand:Aa0:14}"}]}'
            ),
        ),
        (
            "files",
            "WinSCP.ini",
            "[Sessions\\deploy@web01]\nHostName=web01\n§Password={rand:Aa0:16}",
        ),
        # ------------------------------------------------------ webhooks and signed URLs
        (
            "webhooks",
            "notify.py",
            (
                f'§TEAMS = "https://outlook.office.com/webhook/{user}@{tenant}/IncomingWebhook/'
                f'{{rand:h:32}}/{group}"'
            ),
        ),
        (
            "webhooks",
            "alerts.yaml",
            (
                f"§  url: https://corp.webhook.office.com/webhookb2/{user}@{tenant}/"
                f"IncomingWebhook/{{rand:h:32}}/{group}/V2{{rand:Aa0_-:43}}"
            ),
        ),
        (
            "webhooks",
            "flow.json",
            (
                '§{"uri": "https://prod-27.westeurope.logic.azure.com:443/workflows/{rand:h:32}/'
                "triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual"
                '%2Frun&sv=1.0&sig={rand:Aa0_-:43}"}'
            ),
        ),
        (
            "webhooks",
            "notify.sh",
            "§curl -X POST https://discord.com/api/webhooks/{rand:0:18}/{rand:Aa0_-:68}",
        ),
        (
            "webhooks",
            "chat.py",
            (
                "§URL = 'https://chat.googleapis.com/v1/spaces/AAAA{rand:Aa0_-:7}/messages"
                "?key=AIza{rand:Aa0_-:35}&token={rand:Aa0_-:43}%3D'"
            ),
        ),
        ("webhooks", "mm.sh", "§curl -d @msg.json https://chat.corp.example/hooks/{rand:a0:26}"),
        (
            "webhooks",
            "download.txt",
            (
                "§https://bucket.s3.amazonaws.com/r.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                "&X-Amz-Credential=ASIA{rand:A2:16}%2F20240101%2Fus-east-1%2Fs3%2Faws4_request"
                "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
                "&X-Amz-Signature={rand:h:64}"
            ),
        ),
        (
            "webhooks",
            "share.md",
            (
                "§https://acct.blob.core.windows.net/exports/data.csv?sp=r&st=2024-01-01T00:00:00Z"
                "&se=2024-12-31T00:00:00Z&spr=https&sv=2022-11-02&sr=b&sig={rand:Aa0:43}%3D"
            ),
        ),
        (
            "webhooks",
            "gcs.txt",
            (
                "§https://storage.googleapis.com/b/o.bin?X-Goog-Algorithm=GOOG4-RSA-SHA256"
                "&X-Goog-Credential=svc%40{rand:a:6}.iam.gserviceaccount.com%2F20240101%2Fauto%2F"
                "storage%2Fgoog4_request&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900"
                "&X-Goog-SignedHeaders=host&X-Goog-Signature={rand:h:512}"
            ),
        ),
    ]


#: (family, path, text): near-misses, none of which may be flagged.
NEAR_MISSES: list[tuple[str, str, str]] = [
    ("proximity", "pip-23.0.dist-info/RECORD", "pip/__init__.py,sha256={rand:Aa0_-:43},357"),
    ("proximity", "SHA256SUMS", "{rand:h:64}  spillguard-1.0.tar.gz"),
    ("proximity", "checksums.txt", "{rand:h:64}  app-linux-amd64.tar.gz"),
    ("proximity", "package-lock.json", '  "integrity": "sha512-{rand:b64:86}=="'),
    ("proximity", "Dockerfile", "FROM python@sha256:{rand:h:64}"),
    ("proximity", "CHANGELOG.md", "* fix the api key cache (commit {rand:h:40})"),
    ("proximity", "log.txt", "commit {rand:h:40}\nAuthor: A <a@b.c>\n\n    rotate token handling"),
    ("proximity", "app.log", "[INFO] request {uuid} finished, key cache hit"),
    ("proximity", "notebook.txt", "<Future: finished, type: dict, key: {rand:h:32}>"),
    ("proximity", "i18n.js", "const key = 'settings.account.apiTokens.title';"),
    ("proximity", "config.yaml", "cache:\n  key: user_profile_{{id}}\n"),
    ("proximity", "app.py", "token = request.headers.get('X-Token')"),
    ("proximity", ".env.example", "ACME_KEY=<your acme key>"),
    ("proximity", ".env.example", "FOO_TOKEN=${FOO_TOKEN}"),
    ("proximity", "README.md", "Set `ACME_KEY` to the key from the dashboard."),
    ("proximity", "test_api.py", 'FAKE_TOKEN = "test-token-for-unit-tests-only"'),
    ("proximity", "go.sum", "github.com/x/y v1.2.3 h1:{rand:b64:43}="),
    ("proximity", "yarn.lock", "  integrity sha512-{rand:b64:86}=="),
    ("proximity", "Cargo.lock", 'checksum = "{rand:h:64}"'),
    ("proximity", "poetry.lock", 'files = [{file = "a.whl", hash = "sha256:{rand:h:64}"}]'),
    ("proximity", "app.py", "cache_key = hashlib.sha256(data).hexdigest()"),
    ("proximity", "styles.css", ".token-list { color: #a1b2c3; }"),
    ("proximity", "etag.txt", 'ETag: "{rand:h:32}"'),
    ("proximity", "api.md", "GET /v1/keys/{rand:h:8} returns the key's metadata"),
    ("proximity", "ids.py", 'request_id = "{uuid}"'),
    ("positional", "fetch.py", "r = requests.get(url, auth=(user, password))"),
    ("positional", "deploy.sh", "curl -u $USER:$PASSWORD https://ci.corp.example/api/json"),
    ("positional", "deploy.sh", 'curl -H "Authorization: Bearer $TOKEN" https://api.example'),
    ("positional", "run.ps1", "Connect-VIServer -Server vc01 -User $user -Password $pass"),
    ("positional", "Mailer.cs", "new NetworkCredential(user, password);"),
    ("punctuation", ".env.example", "DATABASE_URL=postgres://user:password@localhost/app"),
    ("punctuation", "README.md", "    postgres://user:<password>@host:5432/db"),
    ("punctuation", "config.py", 'db_password = "changeme"'),
    ("punctuation", "config.py", "db_password = os.environ['DB_PASSWORD']"),
    ("punctuation", "web.config", 'connectionString="Server=.;Database=App;Password=${DB_PASS};"'),
    ("punctuation", "settings.ini", "admin_pass = xxx"),
    ("files", "etc/shadow", "daemon:*:19500:0:99999:7:::\nnobody:!:19500::::::"),
    ("files", "dump.sql", "CREATE TABLE users (id INT, password VARCHAR(255) NOT NULL);"),
    ("files", "settings.py", "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']"),
    (
        "webhooks",
        "docs.md",
        "https://outlook.office.com/webhook/<id>@<tenant>/IncomingWebhook/<x>/<y>",
    ),
    ("webhooks", "notify.py", "WEBHOOK = os.environ['TEAMS_WEBHOOK_URL']"),
]


def _place(family: str, path: str, text: str, seed: str, *, real: bool) -> Case:
    text = expand(text, seed)
    lines = text.splitlines()
    marked = [number for number, line in enumerate(lines, 1) if "§" in line]
    line = marked[0] if marked and real else None
    text = text.replace("§", "")
    if not text.endswith("\n"):
        text += "\n"
    return Case(
        f"longtail:{family}",
        f"{path}: {lines[marked[0] - 1][:70] if marked else text[:70]}",
        path,
        text,
        line,
    )


def longtail_corpus(seed: str) -> Iterator[Case]:
    rng = random.Random(f"longtail-{seed}")
    for number, (family, path, text) in enumerate(POSITIVES + _computed(rng)):
        yield _place(family, path, text, f"{seed}-{number}", real=True)
    for number, (family, path, text) in enumerate(NEAR_MISSES):
        filled = text.replace("{uuid}", str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        yield _place(family, path, filled, f"{seed}-near-{number}", real=False)
