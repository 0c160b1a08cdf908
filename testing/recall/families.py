"""The families of the recall corpus: secrets as people leak them, near-misses beside them.

A family is a function of a seed returning ``Case``s. A positive case names the line
its secret is on (found: a finding on that line); a near-miss has no line (flagged:
any finding in its file). Values are generated (``{rand:CHARSET:N}``), so this file
holds no credential.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import uuid
from typing import TYPE_CHECKING

from testing.recall.formats import FORMATS, Placed, in_file, place
from testing.tokens import expand

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@dataclasses.dataclass(frozen=True, slots=True)
class Case:
    family: str
    label: str
    path: str
    text: str
    #: The secret's 1-based line; None for a near-miss.
    line: int | None


def positive(family: str, label: str, placed: Placed) -> Case:
    return Case(family, label, placed.path, placed.text, placed.line)


def near_miss(family: str, label: str, placed: Placed) -> Case:
    return Case(family, label, placed.path, placed.text, None)


def _lines(family: str, seed: str, rows: list[tuple[str, str]], *, real: bool) -> Iterator[Case]:
    """One case per (path, line template) row, the line alone in its file."""
    make = positive if real else near_miss
    for number, (path, template) in enumerate(rows):
        text = expand(template, f"{seed}-{family}-{number}")
        yield make(family, f"{path}: {template[:60]}", in_file(path, text, "# config"))


PW = "{rand:Aa0:18}"
PW_SYMBOLS = "{rand:Aa0:9}%21{rand:Aa0:6}"

CONNECTION_STRINGS = [
    (".env", f"DATABASE_URL=postgres://app_user:{PW}@db.prod.internal:5432/app"),
    ("app/db.py", f'engine = create_engine("postgresql+psycopg2://svc:{PW}@10.0.3.7/orders")'),
    ("config/database.yml", f"  url: mysql2://shop:{PW}@mysql.internal:3306/shop"),
    ("src/db.js", f"mongoose.connect('mongodb+srv://admin:{PW}@cluster0.ab1cd.mongodb.net/prod');"),
    (
        "main.go",
        f'client, _ := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://u:{PW}@m1:27017"))',
    ),
    ("docker-compose.yml", f"      REDIS_URL: redis://:{PW}@redis.internal:6379/0"),
    (".env", f"UPSTASH_REDIS_URL=rediss://default:{PW}@eu1-kind-owl-31337.upstash.io:6379"),
    (
        "application.properties",
        f"spring.rabbitmq.addresses=amqp://svc:{PW}@rabbit.internal:5672/prod",
    ),
    ("celeryconfig.py", f"broker_url = 'amqps://worker:{PW}@b-1.mq.us-east-1.amazonaws.com:5671'"),
    ("settings.py", f"SQLALCHEMY_DATABASE_URI = 'mssql+pyodbc://sa:{PW}@sql01/app?driver=ODBC'"),
    (".env", f"MSSQL_URL=sqlserver://sa:{PW}@sql01.internal:1433?database=app"),
    (
        "application.properties",
        f"spring.datasource.url=jdbc:postgresql://db:5432/app?user=app&password={PW}",
    ),
    (
        "hibernate.cfg.xml",
        f'<property name="url">jdbc:mysql://db/app?user=root&amp;password={PW}</property>',
    ),
    ("app.conf", f'db.url = "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={PW};"'),
    (
        "appsettings.json",
        (
            f'    "Default": "Server=tcp:acme.database.windows.net,1433;Initial Catalog=app;'
            f'User ID=app;Password={PW};Encrypt=True;"'
        ),
    ),
    (
        "Web.config",
        (
            f'<add name="Main" connectionString="Data Source=sql01;Initial Catalog=app;'
            f'User Id=sa;Password={PW};" providerName="System.Data.SqlClient" />'
        ),
    ),
    (
        "report.py",
        (
            f'conn = pyodbc.connect("Driver={{ODBC Driver 18 for SQL Server}};Server=sql01;'
            f'Database=app;Uid=report;Pwd={PW};")'
        ),
    ),
    ("mailer.rb", f"SMTP_URL = 'smtp://mailer:{PW}@smtp.sendgrid.net:587'"),
    (".env", f"EMAIL_URL=smtps://alerts%40acme.io:{PW_SYMBOLS}@smtp.gmail.com:465"),
    ("deploy.sh", f"lftp -e 'mirror -R dist' ftp://deploy:{PW}@ftp.acme-hosting.com/public_html"),
    ("backup.yaml", f"target: sftp://backup:{PW}@files.acme.com:22/nightly"),
    ("ldap.yaml", f"url: ldaps://cn=svc:{PW}@ldap.acme.com:636"),
    ("pip.conf", f"index-url = https://deploy:{PW}@nexus.acme.com/repository/pypi/simple"),
    (".env", f"HTTPS_PROXY=http://proxyuser:{PW}@proxy.acme.com:3128"),
    (
        "db.go",
        f'db, err := sql.Open("postgres", "host=db.internal user=app password={PW} dbname=app")',
    ),
    (
        "store.go",
        f'db, err := sql.Open("mysql", "app:{PW}@tcp(db.internal:3306)/app?parseTime=true")',
    ),
    (
        "settings.py",
        f"DATABASE_URL = 'postgres://orders:{PW_SYMBOLS}@orders-db.c9x.eu-west-1.rds.amazonaws.com/orders'",
    ),
    (
        "values.yaml",
        f"  uri: mongodb://root:{PW}@mongo-0.mongo,mongo-1.mongo:27017/admin?replicaSet=rs0",
    ),
    ("knexfile.js", f"  connection: 'postgresql://knex:{PW}@pg.internal/app',"),
    (
        "Program.cs",
        f'var conn = new SqlConnection("Server=sql01;Database=app;User Id=app;Password={PW};");',
    ),
    (
        "application.properties",
        f"spring.datasource.url=jdbc:oracle:thin:app/{PW}@db.internal:1521:ORCL",
    ),
    ("task-definition.json", f'      "environment": [{{"name": "DB_PASSWORD", "value": "{PW}"}}],'),
    ("deployment.yaml", '        - {name: API_TOKEN, value: "{rand:Aa0:40}"}'),
    (
        "collection.postman.json",
        '{"key": "Authorization", "value": "Bearer {rand:Aa0:40}", "type": "text"}',
    ),
]

CONNECTION_NEAR_MISSES = [
    (".env", "DATABASE_URL=postgres://user:password@localhost:5432/db"),
    ("docker-compose.yml", "      DATABASE_URL: postgres://postgres:postgres@db:5432/test"),
    ("config.py", "SQLALCHEMY_DATABASE_URI = 'mysql://root:root@127.0.0.1:3306/test'"),
    (".env", "MONGO_URL=mongodb://${MONGO_USER}:${MONGO_PASSWORD}@mongo:27017"),
    ("compose.yaml", "      REDIS_URL: redis://:${REDIS_PASSWORD}@redis:6379"),
    ("celeryconfig.py", "broker_url = 'amqp://guest:guest@localhost:5672//'"),
    ("README.md", "postgresql://<user>:<password>@<host>:5432/<database>"),
    ("README.md", "mongodb+srv://<username>:<password>@cluster0.mongodb.net/myFirstDatabase"),
    (
        "application.properties",
        "spring.datasource.url=jdbc:postgresql://localhost/test?user=app&password=${DB_PASS}",
    ),
    (
        "appsettings.json",
        '    "Default": "Server=localhost;Database=app;User Id=sa;Password=<YourStrong@Passw0rd>;"',
    ),
    (
        "appsettings.Development.json",
        '    "Default": "Server=(localdb)\\\\mssqllocaldb;Database=app;Trusted_Connection=True;"',
    ),
    ("db.py", 'url = "postgresql://%s:%s@%s/%s" % (user, password, host, name)'),
    ("db.py", 'url = f"postgresql://{user}:{password}@{host}:{port}/{name}"'),
    ("docs/setup.md", "export DATABASE_URL=postgres://app:app@localhost/app_dev"),
    ("docker-compose.yml", "      - DATABASE_URL=mysql://wordpress:wordpress@db:3306/wordpress"),
    ("test/settings.py", "DATABASE_URL = 'postgres://test:test@localhost/test_db'"),
    (".env.example", "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DBNAME"),
    ("db.go", 'dsn := fmt.Sprintf("host=%s user=%s password=%s dbname=%s", h, u, p, d)'),
    (
        "db.go",
        'db, err := sql.Open("postgres", "host=localhost user=postgres password=postgres sslmode=disable")',
    ),
    ("README.md", "MSSQL_SA_PASSWORD=YourStrong@Passw0rd docker compose up"),
    ("docker-compose.yml", "      POSTGRES_PASSWORD: mysecretpassword"),
    ("package-lock.json", '      "resolved": "https://registry.npmjs.org/pg/-/pg-8.11.3.tgz",'),
    (".env", "REDIS_URL=redis://localhost:6379/0"),
    ("config.yaml", "smtp_url: smtp://user:pass@smtp.example.com:587"),
    ("jdbc.properties", "url=jdbc:oracle:thin:@//db.internal:1521/ORCL"),
]

TOKEN = "{rand:Aa0:40}"
CLI_AND_HEADERS = [
    ("scripts/api.sh", f"curl -u admin:{PW} https://api.acme.com/v1/export"),
    ("Makefile", f'\tcurl --user "deploy:{PW}" -X POST https://ci.acme.com/job/build'),
    (
        "scripts/release.sh",
        f'curl -s -H "Authorization: Bearer {TOKEN}" https://api.acme.com/v2/releases',
    ),
    (
        "scripts/sync.sh",
        "curl -H 'Authorization: Basic {rand:b64:40}' https://jira.acme.com/rest/api/2/issue",
    ),
    (
        "scripts/gh.sh",
        'curl -H "Authorization: token {rand:h:40}" https://api.github.com/user/repos',
    ),
    ("scripts/fetch.sh", f"wget --user=deploy --password={PW} https://files.acme.com/build.tgz"),
    (
        "scripts/fetch.sh",
        f"wget --http-user=ci --http-password='{PW}' https://artifacts.acme.com/app.zip",
    ),
    ("scripts/dump.sh", f"mysql -h db.internal -u root -p{PW} shop < schema.sql"),
    ("scripts/dump.sh", f"mysqldump --user=backup --password='{PW}' --all-databases > all.sql"),
    ("scripts/ssh.sh", f"sshpass -p '{PW}' ssh deploy@10.0.0.12 'systemctl restart app'"),
    ("scripts/psql.sh", f"PGPASSWORD={PW} psql -h db.internal -U app -d app -c 'select 1'"),
    ("scripts/env.sh", f"export PGPASSWORD='{PW}'"),
    ("client.py", f'resp = requests.get(url, headers={{"Authorization": "Bearer {TOKEN}"}})'),
    ("client.py", 'session.headers.update({"Authorization": "Token {rand:h:40}"})'),
    ("api.js", f"  headers: {{ Authorization: `Bearer {TOKEN}` }},"),
    ("api.js", "  headers: { 'X-API-Key': '{rand:Aa0:32}' },"),
    ("client.go", f'req.Header.Set("Authorization", "Bearer {TOKEN}")'),
    ("Client.java", 'conn.setRequestProperty("Authorization", "Basic {rand:b64:36}");'),
    ("Api.cs", f'client.DefaultRequestHeaders.Add("Authorization", "Bearer {TOKEN}");'),
    ("requests.http", f"Authorization: Bearer {TOKEN}"),
    ("scripts/h.sh", f"http GET api.acme.com/me Authorization:'Bearer {TOKEN}'"),
    ("scripts/clone.sh", "git clone https://oauth2:{rand:Aa0_-:20}@gitlab.acme.com/team/app.git"),
    ("scripts/login.sh", f"docker login -u deploy -p {PW} registry.acme.com"),
    (
        "scripts/helm.sh",
        f"helm repo add acme https://charts.acme.com --username ci --password {PW}",
    ),
    (
        "scripts/az.sh",
        f"az login --service-principal -u http://acme-ci -p {PW} --tenant acme.onmicrosoft.com",
    ),
    ("scripts/run.sh", f"java -Djavax.net.ssl.keyStorePassword={PW} -jar app.jar"),
    ("client.py", "r = requests.post(url, auth=('api', '{rand:Aa0:24}'))"),
    ("client.rb", "req.basic_auth 'deploy', '{rand:Aa0:20}'"),
    ("scripts/redis.sh", f"redis-cli -h cache.internal -a {PW} FLUSHALL"),
    ("scripts/smb.sh", f"smbclient //fs01/share -U backup%{PW}"),
]

CLI_NEAR_MISSES = [
    ("scripts/api.sh", 'curl -u "$API_USER:$API_PASS" https://api.acme.com'),
    ("scripts/api.sh", 'curl -H "Authorization: Bearer $TOKEN" https://api.acme.com'),
    ("scripts/api.sh", 'curl -H "Authorization: Bearer ${ACCESS_TOKEN}" https://api.acme.com'),
    ("README.md", "curl -H 'Authorization: Bearer <token>' https://api.acme.com/v1/me"),
    ("README.md", 'curl -H "Authorization: Bearer YOUR_TOKEN_HERE" https://api.acme.com'),
    ("client.py", 'headers = {"Authorization": f"Bearer {token}"}'),
    ("client.go", 'req.Header.Set("Authorization", "Bearer "+token)'),
    ("scripts/db.sh", "mysql -u root -p shop"),
    ("scripts/db.sh", 'PGPASSWORD="$DB_PASSWORD" psql -h db -U app'),
    ("scripts/ssh.sh", 'sshpass -p "$SSHPASS" ssh deploy@host'),
    ("scripts/fetch.sh", 'wget --password="$PASS" https://files.acme.com/x'),
    ("docs/api.md", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
    ("docs/api.md", "curl -u user:password https://api.example.com"),
    ("client.js", "headers: { Authorization: 'Bearer ' + token },"),
    ("Client.java", 'conn.setRequestProperty("Authorization", "Bearer " + accessToken);'),
    (
        "docs/auth.md",
        'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"',
    ),
    (
        "scripts/login.sh",
        'docker login -u "$CI_REGISTRY_USER" -p "$CI_REGISTRY_PASSWORD" $CI_REGISTRY',
    ),
    ("api.js", "  headers: { 'X-API-Key': process.env.API_KEY },"),
    ("client.py", "r = requests.post(url, auth=(user, password))"),
    ("nginx.conf", "proxy_set_header Authorization $http_authorization;"),
]

CREDENTIAL_FILES = [
    (".git-credentials", "https://deploy:{rand:Aa0:20}@github.com"),
    (".git-credentials", "https://jdoe:{rand:Aa0_-:24}@gitlab.acme.com"),
    (".pgpass", f"db.prod.internal:5432:app:app_user:{PW}"),
    (".pgpass", f"*:*:*:postgres:{PW}"),
    (".netrc", f"machine api.heroku.com login me@acme.com password {PW}"),
    ("_netrc", f"machine ftp.acme.com login deploy password {PW}"),
    (".npmrc", "_auth={rand:b64:40}="),
    (".npmrc", "//npm.acme.com/repository/npm/:_password={rand:b64:24}="),
    (".npmrc", "//npm.acme.com/:_authToken={rand:Aa0:40}"),
    (".pypirc", f"password = {PW}"),
    (".docker/config.json", '      "auth": "{rand:b64:40}"'),
    ("settings.xml", f"      <password>{PW}</password>"),
    (".aws/credentials", "aws_secret_access_key = {rand:b64:40}"),
    (".s3cfg", "secret_key = {rand:b64:40}"),
    ("kubeconfig", "    token: {rand:Aa0:64}"),
    ("auth.json", f'        "password": "{PW}"'),
    ("gradle.properties", f"mavenPassword={PW}"),
    (".htpasswd", "admin:$apr1${rand:Aa0:8}${rand:Aa0:22}"),
    (".htpasswd", "deploy:{SHA}{rand:b64:27}="),
    ("conf/htpasswd", "ops:{rand:Aa0:2}{rand:Aa0:11}"),
    (".env", f"export PGPASSWORD={PW}"),
    (".netrc", f"  password {PW}"),
    ("config/master.key", "{rand:h:32}"),
    ("rclone.conf", "secret_access_key = {rand:b64:40}"),
    (".my.cnf", f"password={PW}"),
]

CREDENTIAL_FILE_NEAR_MISSES = [
    (".pgpass", "localhost:5432:*:postgres:postgres"),
    (".npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"),
    (".npmrc", "registry=https://registry.npmjs.org/"),
    (".docker/config.json", '  "credsStore": "desktop"'),
    (".pypirc", "password = <your PyPI token>"),
    ("settings.xml", "      <password>${env.NEXUS_PASSWORD}</password>"),
    (".netrc", "machine github.com login $GH_USER password $GH_TOKEN"),
    (".git-credentials", "https://github.com"),
    ("config/credentials.yml.enc", "{rand:b64:60}--{rand:b64:16}--{rand:b64:22}=="),
    ("yarn.lock", "  integrity sha512-{rand:b64:86}=="),
    ("package-lock.json", '      "integrity": "sha512-{rand:b64:86}=="'),
    ("Gemfile.lock", "    devise (4.9.3)"),
    ("poetry.lock", 'content-hash = "{rand:h:64}"'),
    (".aws/config", "region = eu-west-1"),
    ("README.md", "admin:$apr1$salt$hash"),
]


def _django_key() -> str:
    """50 characters of Django's own alphabet, as get_random_secret_key() makes them."""
    return "{rand:a0:20}$(!{rand:a0:12}^=+{rand:a0:12}"


FRAMEWORKS = [
    ("mysite/settings.py", "SECRET_KEY = 'django-insecure-" + _django_key() + "'"),
    ("mysite/settings.py", 'SECRET_KEY = "' + _django_key() + '"'),
    ("config/secrets.yml", "  secret_key_base: {rand:h:128}"),
    ("config/master.key", "{rand:h:32}"),
    (".env", "APP_KEY=base64:{rand:b64:43}="),
    ("config/app.php", "    'key' => env('APP_KEY', 'base64:{rand:b64:43}='),"),
    (
        "wp-config.php",
        "define('AUTH_KEY',         '{rand:Aa0:20}|*{rand:Aa0:10} [{rand:Aa0:14}<{rand:Aa0:16}');",
    ),
    ("wp-config.php", "define( 'NONCE_SALT', '{rand:Aa0:30}@{rand:Aa0:12}~{rand:Aa0:20}' );"),
    ("wp-config.php", f"define('DB_PASSWORD', '{PW}');"),
    ("app.py", "app.secret_key = '{rand:h:48}'"),
    ("app.py", "app.config['SECRET_KEY'] = '{rand:Aa0:32}'"),
    ("app/__init__.py", "app.config.update(SECRET_KEY='{rand:b64u:43}')"),
    ("application.properties", f"spring.datasource.password={PW}"),
    ("application.yml", f"    password: {PW}"),
    ("application.properties", f"spring.mail.password={PW}"),
    (
        "application.yml",
        "            client-secret: {rand:Aa0_-:40}",
    ),
    (".env", "APP_SECRET={rand:h:32}"),
    (
        "Web.config",
        '<machineKey validationKey="{rand:H:128}" decryptionKey="{rand:H:48}" validation="SHA1" />',
    ),
    ("config/prod.exs", '  secret_key_base: "{rand:Aa0:64}",'),
    ("app.js", "app.use(session({ secret: '{rand:Aa0:32}', resave: false }));"),
    ("config/initializers/devise.rb", "  config.secret_key = '{rand:h:128}'"),
    (
        "config/initializers/secret_token.rb",
        "Rails.application.config.secret_token = '{rand:h:128}'",
    ),
    (".env.local", "NEXTAUTH_SECRET={rand:b64:43}="),
    ("application.properties", "jwt.secret={rand:Aa0:48}"),
    ("settings.py", "SOCIAL_AUTH_GITHUB_SECRET = '{rand:h:40}'"),
]

FRAMEWORK_NEAR_MISSES = [
    ("config/mqtt.yaml", "client_key: config/certs/client-key.pem"),
    ("main.tf", '  signing_key = "keys/release-signing.pub"'),
    ("settings.py", "SIGNING_KEY = 'secrets/jwt-signing-key.json'"),
    ("mysite/settings.py", "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']"),
    ("mysite/settings.py", "SECRET_KEY = 'django-insecure-change-me'"),
    ("mysite/settings.py", "SECRET_KEY = env('SECRET_KEY', default='unsafe-secret-key')"),
    ("config/secrets.yml", '  secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>'),
    (".env.example", "APP_KEY="),
    ("wp-config-sample.php", "define( 'AUTH_KEY',         'put your unique phrase here' );"),
    ("app.py", "app.secret_key = os.urandom(24)"),
    ("app.py", "app.config['SECRET_KEY'] = os.getenv('SECRET_KEY')"),
    ("application.properties", "spring.datasource.password=${DB_PASSWORD}"),
    ("application.yml", "    password: ${SPRING_DATASOURCE_PASSWORD:}"),
    (".env.dist", "APP_SECRET=ChangeThisSecret"),
    (
        "Web.config",
        '<machineKey validationKey="AutoGenerate,IsolateApps" decryptionKey="AutoGenerate,IsolateApps" />',
    ),
    ("config/prod.exs", '  secret_key_base: System.fetch_env!("SECRET_KEY_BASE"),'),
    ("tests/settings.py", "SECRET_KEY = 'test-secret-key-for-unit-tests'"),
    ("conftest.py", "app.config['SECRET_KEY'] = 'testing'"),
    ("settings.py", "PASSWORD_HASHERS = ['django.contrib.auth.hashers.MD5PasswordHasher']"),
    ("settings.py", "AUTH_PASSWORD_VALIDATORS = []"),
    ("config/app.php", "    'key' => env('APP_KEY'),"),
]

GENERIC_NAMES = (
    "API_KEY", "SECRET_KEY", "CLIENT_SECRET", "AUTH_TOKEN", "ACCESS_TOKEN", "API_SECRET",
    "DB_PASSWORD", "SIGNING_SECRET", "ENCRYPTION_KEY", "WEBHOOK_SECRET", "APP_SECRET",
    "PRIVATE_KEY", "AUTH_KEY", "MASTER_KEY", "REFRESH_TOKEN", "SESSION_SECRET",
    "SMTP_PASSWORD", "JWT_SECRET", "API_TOKEN", "SERVICE_CREDENTIALS", "ADMIN_PASSWORD",
    "CONSUMER_SECRET", "SHARED_SECRET", "HMAC_KEY",
)  # fmt: skip
GENERIC_VALUES = (
    "{rand:Aa0:32}", "{rand:h:40}", "{rand:b64:43}=", "{rand:Aa0_-:48}", "{rand:h:64}",
    "{rand:Aa0:12}!{rand:Aa0:6}", "{rand:Aa0:24}", "{rand:b64u:40}",
)  # fmt: skip


def _digest(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


GENERIC_NEAR_VALUES: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    ("env reference", lambda name, _: f"${{{name}}}"),
    ("placeholder", lambda name, _: f"<{name.lower().replace('_', '-')}>"),
    ("your-...-here", lambda name, _: f"your-{name.lower().replace('_', '-')}-here"),
    ("changeme", lambda _name, _seed: "changeme"),
    ("xs", lambda _name, _seed: "x" * 32),
    ("uuid", lambda _, seed: str(uuid.UUID(_digest(seed)[:32]))),
    ("test fixture", lambda name, _: f"test-{name.lower().replace('_', '-')}-123"),
    ("fake value", lambda _name, _seed: "fake-secret-for-tests"),
    ("identifier", lambda name, _: f"X-{name.title().replace('_', '-')}"),
    ("helm template", lambda name, _: f"{{{{ .Values.{name.lower()} }}}}"),
)
NEUTRAL_NAMES = ("COMMIT_SHA", "CHECKSUM", "INTEGRITY", "REQUEST_ID", "CACHE_KEY", "ETAG")
#: Names whose random-looking values are not secrets: identifiers, public keys, cursors.
RANDOM_NEUTRAL_NAMES = (
    "IDEMPOTENCY_KEY", "PUBLIC_KEY", "SITE_KEY", "PARTITION_KEY", "PAGE_TOKEN",
    "CSRF_TOKEN", "NEXT_TOKEN", "PUBLISHABLE_KEY", "TRACE_ID", "SORT_KEY",
)  # fmt: skip


def generic(seed: str) -> Iterator[Case]:
    names = itertools.cycle(GENERIC_NAMES)
    values = itertools.cycle(GENERIC_VALUES)
    for number, fmt in enumerate(FORMATS):
        for _ in range(3):
            name, template = next(names), next(values)
            value = expand(template, f"{seed}-generic-{number}-{name}")
            yield positive("generic assignments", f"{fmt}: {name}", place(fmt, name, value))
    nears = itertools.cycle(GENERIC_NEAR_VALUES)
    for number, fmt in enumerate(FORMATS):
        for _ in range(2):
            name = next(names)
            label, make = next(nears)
            value = make(name, f"{seed}-{number}-{name}")
            yield near_miss(
                "generic assignments", f"{fmt}: {name} {label}", place(fmt, name, value)
            )
        neutral = NEUTRAL_NAMES[number % len(NEUTRAL_NAMES)]
        hashed = _digest(f"{seed}-{fmt}")[: 40 if number % 2 else 64]
        yield near_miss(
            "generic assignments", f"{fmt}: {neutral} hash", place(fmt, neutral, hashed)
        )
        neutral = RANDOM_NEUTRAL_NAMES[number % len(RANDOM_NEUTRAL_NAMES)]
        value = expand("{rand:Aa0:32}", f"{seed}-neutral-{fmt}")
        yield near_miss("generic assignments", f"{fmt}: {neutral}", place(fmt, neutral, value))


def connection_strings(seed: str) -> Iterator[Case]:
    yield from _lines("connection strings", seed, CONNECTION_STRINGS, real=True)
    yield from _lines("connection strings", seed, CONNECTION_NEAR_MISSES, real=False)


def command_lines_and_headers(seed: str) -> Iterator[Case]:
    yield from _lines("command lines and headers", seed, CLI_AND_HEADERS, real=True)
    yield from _lines("command lines and headers", seed, CLI_NEAR_MISSES, real=False)


def credential_files(seed: str) -> Iterator[Case]:
    yield from _lines("credential files", seed, CREDENTIAL_FILES, real=True)
    yield from _lines("credential files", seed, CREDENTIAL_FILE_NEAR_MISSES, real=False)


def frameworks(seed: str) -> Iterator[Case]:
    yield from _lines("framework secrets", seed, FRAMEWORKS, real=True)
    yield from _lines("framework secrets", seed, FRAMEWORK_NEAR_MISSES, real=False)


# Published in vendors' documentation and specifications: nobody's credential.
_AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
DOCUMENTED = [
    ("docs/aws.md", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("docs/aws.md", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("docs/aws.md", "AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"),
    (
        "appsettings.Development.json",
        (
            '"Storage": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;'
            f'AccountKey={_AZURITE_KEY};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"'
        ),
    ),
    ("local.settings.json", f'    "AccountKey": "{_AZURITE_KEY}"'),
    (
        "docs/jwt.md",
        (
            "token = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"
            "IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'"
        ),
    ),
    (
        "tests/test_jwt.py",
        (
            'TOKEN = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4'
            "MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ."
            'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"'
        ),
    ),
    ("docs/github.md", "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("docs/mailgun.md", "MAILGUN_API_KEY=key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    (
        "README.md",
        "docker run -e 'ACCEPT_EULA=Y' -e 'MSSQL_SA_PASSWORD=yourStrong(!)Password' mssql",
    ),
    ("docs/postgres.md", "docker run -e POSTGRES_PASSWORD=mysecretpassword -d postgres"),
    (
        "docs/oauth.md",
        '"access_token":"2YotnFZFEjr1zCsicMWpAA","refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA"',
    ),
]


def documented_examples(seed: str) -> Iterator[Case]:
    del seed  # the examples are fixed strings
    for path, line in DOCUMENTED:
        yield near_miss("documented examples", f"{path}: {line[:50]}", in_file(path, line))


FAMILIES: dict[str, Callable[[str], Iterator[Case]]] = {
    "connection strings": connection_strings,
    "command lines and headers": command_lines_and_headers,
    "credential files": credential_files,
    "framework secrets": frameworks,
    "generic assignments": generic,
    "documented examples": documented_examples,
}
