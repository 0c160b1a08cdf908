"""Blind corpus near-misses: files that look like they hold a secret and do not.

``NEAR`` is ``(family, path, text)``: placeholders, environment and secret-store
references, digests in digest contexts, identifiers that are not credentials, public
keys, fixtures that say they are fake, encoded assets, minified and generated code,
translations. ``DOCUMENTED`` is ``(path, text)``: values vendors and RFCs publish as
examples. A near-miss is flagged when its file has any finding at all.
"""

from __future__ import annotations

NEAR: tuple[tuple[str, str, str], ...] = (
    # ---- placeholders -----------------------------------------------------------------
    (
        "placeholder",
        ".env.example",
        """\
HONEYCOMB_WRITEKEY=your_honeycomb_key_here
POSTMARK_TOKEN=<your-postmark-server-token>
DB_PASSWORD=changeme
REDIS_PASS=
""",
    ),
    (
        "placeholder",
        ".env.sample",
        """\
MAILGUN_SECRET=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-xxxxxxxx-xxxxxxxx
BINANCE_API_KEY=XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX
""",
    ),
    (
        "placeholder",
        "config/example.yml",
        """\
datadog:
  api_key: <DATADOG_API_KEY>
  app_key: <DATADOG_APP_KEY>
""",
    ),
    (
        "placeholder",
        "docs/install.md",
        """\
Set your key in `config.toml`:

```toml
[openweather]
key = "YOUR_API_KEY"
```
""",
    ),
    (
        "placeholder",
        "README.md",
        """\
```python
client = Client("ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "your_auth_token")
```
""",
    ),
    (
        "placeholder",
        "docker-compose.yml",
        """\
services:
  db:
    environment:
      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}
      POSTGRES_USER: ${POSTGRES_USER:-app}
""",
    ),
    (
        "placeholder",
        "k8s/deployment.yaml",
        """\
          env:
            - name: CLICKSEND_API_KEY
              valueFrom:
                secretKeyRef:
                  name: clicksend
                  key: api-key
""",
    ),
    (
        "placeholder",
        ".github/workflows/deploy.yml",
        """\
    env:
      NETLIFY_AUTH_TOKEN: ${{ secrets.NETLIFY_AUTH_TOKEN }}
      NETLIFY_SITE_ID: ${{ vars.NETLIFY_SITE_ID }}
""",
    ),
    (
        "placeholder",
        "main.tf",
        """\
provider "datadog" {
  api_key = var.datadog_api_key
  app_key = var.datadog_app_key
}
""",
    ),
    (
        "placeholder",
        "variables.tf",
        """\
variable "pagerduty_token" {
  type      = string
  sensitive = true
}
""",
    ),
    (
        "placeholder",
        "appsettings.json",
        """\
{
  "SendGrid": { "ApiKey": "" },
  "ConnectionStrings": { "Default": "Server=(localdb)\\\\mssqllocaldb;Database=App;Trusted_Connection=True;" }
}
""",
    ),
    (
        "placeholder",
        "application.properties",
        """\
spring.datasource.password=${DB_PASSWORD}
app.geocoder.here.api-key=${HERE_API_KEY:}
""",
    ),
    (
        "placeholder",
        "settings.py",
        """\
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
EMAIL_HOST_PASSWORD = os.getenv("EMAIL_HOST_PASSWORD", "")
""",
    ),
    (
        "placeholder",
        "src/config.ts",
        """\
export const GEOAPIFY_API_KEY = process.env.GEOAPIFY_API_KEY ?? '';
export const MAPTILER_KEY = import.meta.env.VITE_MAPTILER_KEY;
""",
    ),
    (
        "placeholder",
        "cmd/api/main.go",
        """\
cfg := &Config{
	APIKey:    os.Getenv("BREVO_API_KEY"),
	AuthToken: os.Getenv("PAGERDUTY_TOKEN"),
}
""",
    ),
    (
        "placeholder",
        "src/main/java/com/acme/Config.java",
        """\
private static final String WEATHERSTACK_ACCESS_KEY = System.getenv("WEATHERSTACK_ACCESS_KEY");
""",
    ),
    (
        "placeholder",
        "config/initializers/stripe.rb",
        """\
Stripe.api_key = ENV.fetch("STRIPE_SECRET_KEY")
Rails.application.credentials.dig(:mailgun, :api_key)
""",
    ),
    (
        "placeholder",
        "wp-config-sample.php",
        """\
define( 'DB_PASSWORD', 'password_here' );
define( 'AUTH_KEY',         'put your unique phrase here' );
""",
    ),
    (
        "placeholder",
        "config/services.php",
        """\
'mailgun' => [
    'secret' => env('MAILGUN_SECRET'),
],
""",
    ),
    (
        "placeholder",
        "docs/curl.md",
        """\
curl -H "Authorization: Bearer $NETLIFY_TOKEN" https://api.netlify.com/api/v1/sites
curl -u "$ZENDESK_EMAIL/token:$ZENDESK_TOKEN" https://x.zendesk.com/api/v2/tickets.json
""",
    ),
    (
        "placeholder",
        "docs/api.md",
        """\
    curl "https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid={API_KEY}"
    curl "https://api.trello.com/1/members/me/boards?key={yourKey}&token={yourToken}"
""",
    ),
    (
        "placeholder",
        "scripts/deploy.sh",
        """\
mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop < dump.sql
docker login -u "$CI_REGISTRY_USER" -p "$CI_REGISTRY_PASSWORD" "$CI_REGISTRY"
""",
    ),
    (
        "placeholder",
        "Web.config",
        """\
<appSettings>
  <add key="MailjetApiSecret" value="#{MailjetApiSecret}#" />
  <add key="StripeKey" value="__STRIPE_KEY__" />
</appSettings>
""",
    ),
    (
        "placeholder",
        ".m2/settings.xml",
        """\
<server>
  <id>nexus</id>
  <username>${env.NEXUS_USER}</username>
  <password>${env.NEXUS_PASSWORD}</password>
</server>
""",
    ),
    (
        "placeholder",
        "group_vars/all.yml",
        """\
mysql_root_password: "{{ vault_mysql_root_password }}"
ansible_password: "{{ lookup('env', 'WIN_ADMIN_PASSWORD') }}"
""",
    ),
    (
        "placeholder",
        "values.yaml",
        """\
acme:
  apiKey: ""  # set with --set acme.apiKey=...
  existingSecret: acme-credentials
""",
    ),
    (
        "placeholder",
        "docs/connection.md",
        """\
Connection string format:

    Server=myServerAddress;Database=myDataBase;User Id=myUsername;Password=myPassword;
    postgres://USER:PASSWORD@HOST:5432/DBNAME
""",
    ),
    (
        "placeholder",
        ".pgpass.example",
        """\
# hostname:port:database:username:password
localhost:5432:*:postgres:<password>
""",
    ),
    (
        "placeholder",
        "Dockerfile",
        """\
ARG NPM_TOKEN
RUN echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > .npmrc
""",
    ),
    (
        "placeholder",
        "README.md",
        """\
Export your token before running: `export HCLOUD_TOKEN=<token>`.
The password for the demo database is `demo` (it is reset every night).
""",
    ),
    (
        "placeholder",
        "config.sample.json",
        """\
{
  "pinecone_api_key": "{lit:00000000-0000-0000-0000-000000000000}",
  "cmc_key": "REPLACE_ME"
}
""",
    ),
    (
        "placeholder",
        "docs/netrc.md",
        """\
    machine api.heroku.com
      login me@example.com
      password <your API key>
""",
    ),
    (
        "placeholder",
        "src/settings.js",
        """\
const apiKey = "";
const acmeToken = config.get('acme.token');
const secret = await secretManager.getSecretValue({ SecretId: 'prod/acme' });
""",
    ),
    (
        "placeholder",
        "login.html",
        """\
<input type="password" name="password" placeholder="Password" autocomplete="current-password">
<label for="api_key">API key</label><input id="api_key" name="api_key" value="">
""",
    ),
    (
        "placeholder",
        "docs/config.md",
        """\
| Setting       | Example           |
|---------------|-------------------|
| `api_key`     | `sk_test_...`     |
| `db_password` | `********`        |
""",
    ),
    (
        "placeholder",
        "kubeconfig.yaml",
        """\
users:
- name: ci
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: ["eks", "get-token", "--cluster-name", "prod"]
""",
    ),
    (
        "placeholder",
        "deploy.ps1",
        """\
$secure = Read-Host -AsSecureString "Password"
$cred = New-Object System.Management.Automation.PSCredential ("CORP\\svc_deploy", $secure)
""",
    ),
    (
        "placeholder",
        "src/db.js",
        """\
const pool = mysql.createPool({ host: 'localhost', user: 'root', password: process.env.DB_PASS, database: 'inventory' });
""",
    ),
    (
        "placeholder",
        "pip.conf",
        """\
[global]
index-url = https://${PIP_USER}:${PIP_PASSWORD}@pypi.corp.example/simple
""",
    ),
    (
        "placeholder",
        "templates/config.j2",
        """\
api_key: {{ acme_api_key }}
password: {{ db_password | default('') }}
""",
    ),
    # ---- digests in digest contexts --------------------------------------------------------
    (
        "digest",
        "package-lock.json",
        """\
    "node_modules/lodash": {
      "version": "4.17.21",
      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",
      "integrity": "sha512-{rand:b64:86}=="
    },
""",
    ),
    (
        "digest",
        "yarn.lock",
        """\
"@babel/core@^7.22.0":
  version "7.23.9"
  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.23.9.tgz#{rand:h:40}"
  integrity sha512-{rand:b64:86}==
""",
    ),
    (
        "digest",
        "pnpm-lock.yaml",
        """\
  /react@18.2.0:
    resolution: {integrity: sha512-{rand:b64:86}==}
    engines: {node: '>=0.10.0'}
""",
    ),
    (
        "digest",
        "poetry.lock",
        """\
[[package]]
name = "requests"
version = "2.31.0"
files = [
    {file = "requests-2.31.0-py3-none-any.whl", hash = "sha256:{rand:h:64}"},
    {file = "requests-2.31.0.tar.gz", hash = "sha256:{rand:h:64}"},
]
""",
    ),
    (
        "digest",
        "Pipfile.lock",
        """\
        "certifi": {
            "hashes": [
                "sha256:{rand:h:64}",
                "sha256:{rand:h:64}"
            ],
            "version": "==2024.2.2"
        },
""",
    ),
    (
        "digest",
        "requirements.txt",
        """\
urllib3==2.2.1 \\
    --hash=sha256:{rand:h:64} \\
    --hash=sha256:{rand:h:64}
""",
    ),
    (
        "digest",
        "go.sum",
        """\
github.com/google/uuid v1.6.0 h1:{rand:b64:43}=
github.com/google/uuid v1.6.0/go.mod h1:{rand:b64:43}=
""",
    ),
    (
        "digest",
        "Cargo.lock",
        """\
[[package]]
name = "serde"
version = "1.0.197"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "{rand:h:64}"
""",
    ),
    (
        "digest",
        "site-packages/requests-2.31.0.dist-info/RECORD",
        """\
requests/__init__.py,sha256={rand:Aa0_-:43},4965
requests/adapters.py,sha256={rand:Aa0_-:43},19553
requests-2.31.0.dist-info/RECORD,,
""",
    ),
    (
        "digest",
        "Dockerfile",
        """\
FROM python:3.12-slim@sha256:{rand:h:64}
FROM node:20-alpine@sha256:{rand:h:64} AS build
""",
    ),
    (
        "digest",
        "k8s/deployment.yaml",
        """\
        - name: api
          image: ghcr.io/quill/api@sha256:{rand:h:64}
""",
    ),
    (
        "digest",
        "SHA256SUMS",
        """\
{rand:h:64}  terraform_1.7.4_linux_amd64.zip
{rand:h:64}  terraform_1.7.4_darwin_arm64.zip
""",
    ),
    (
        "digest",
        "Formula/tool.rb",
        """\
  url "https://github.com/acme/tool/archive/refs/tags/v2.1.0.tar.gz"
  sha256 "{rand:h:64}"
""",
    ),
    (
        "digest",
        "WORKSPACE",
        """\
http_archive(
    name = "rules_go",
    sha256 = "{rand:h:64}",
    urls = ["https://github.com/bazelbuild/rules_go/releases/download/v0.46.0/rules_go-v0.46.0.zip"],
)
""",
    ),
    (
        "digest",
        "default.nix",
        """\
  src = fetchFromGitHub {
    owner = "acme";
    repo = "tool";
    rev = "v2.1.0";
    hash = "sha256-{rand:b64:43}=";
  };
""",
    ),
    (
        "digest",
        ".terraform.lock.hcl",
        """\
provider "registry.terraform.io/hashicorp/aws" {
  version = "5.40.0"
  hashes = [
    "h1:{rand:b64:43}=",
    "zh:{rand:h:64}",
    "zh:{rand:h:64}",
  ]
}
""",
    ),
    (
        "digest",
        "composer.lock",
        """\
            "source": {
                "type": "git",
                "url": "https://github.com/guzzle/guzzle.git",
                "reference": "{rand:h:40}"
            },
            "dist": { "shasum": "" },
""",
    ),
    (
        "digest",
        "Gemfile.lock",
        """\
GIT
  remote: https://github.com/rails/rails.git
  revision: {rand:h:40}
  branch: main
""",
    ),
    (
        "digest",
        "Chart.lock",
        """\
dependencies:
- name: postgresql
  repository: https://charts.bitnami.com/bitnami
  version: 12.5.6
digest: sha256:{rand:h:64}
generated: "2024-03-01T10:00:00Z"
""",
    ),
    (
        "digest",
        ".github/workflows/ci.yml",
        """\
    steps:
      - uses: actions/checkout@{rand:h:40} # v4.1.1
      - uses: actions/setup-node@{rand:h:40} # v4.0.2
""",
    ),
    (
        "digest",
        "index.html",
        """\
<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js"
        integrity="sha384-{rand:b64:64}" crossorigin="anonymous"></script>
""",
    ),
    (
        "digest",
        "roles/app/tasks/main.yml",
        """\
- name: download node exporter
  get_url:
    url: https://github.com/prometheus/node_exporter/releases/download/v1.7.0/node_exporter-1.7.0.linux-amd64.tar.gz
    checksum: sha256:{rand:h:64}
""",
    ),
    (
        "digest",
        "CHANGELOG.md",
        """\
## 2.4.1
- fix retry of idempotent requests ({rand:h:7})
- bump urllib3 ([{rand:h:40}](https://github.com/acme/client/commit/{rand:h:40}))
""",
    ),
    (
        "digest",
        "notes/git-log.txt",
        """\
commit {rand:h:40}
Merge: {rand:h:7} {rand:h:7}
Author: Dana Kim <dana@example.org>

    Merge branch 'fix/token-refresh'
""",
    ),
    (
        "digest",
        "vendor/modules.txt",
        """\
Subproject commit {rand:h:40}
""",
    ),
    (
        "digest",
        "download.sh",
        """\
EXPECTED_SHA256="{rand:h:64}"
echo "$EXPECTED_SHA256  kubectl" | sha256sum --check
""",
    ),
    (
        "digest",
        "manifest.json",
        """\
{
  "main.js": "/static/js/main.{rand:h:8}.js",
  "main.css": "/static/css/main.{rand:h:8}.css",
  "contentHash": "{rand:h:20}"
}
""",
    ),
    (
        "digest",
        "api/response.json",
        """\
{"ETag": "\\"{rand:h:32}\\"", "Content-MD5": "{rand:b64:22}==", "x-amz-version-id": "{rand:Aa0:32}"}
""",
    ),
    (
        "digest",
        "migrations/0042_auto.py",
        """\
# Generated by Django 5.0.2
revision = "{rand:h:12}"
down_revision = "{rand:h:12}"
""",
    ),
    (
        "digest",
        "package.json",
        """\
{
  "packageManager": "pnpm@8.15.4+sha256.{rand:h:64}"
}
""",
    ),
    (
        "digest",
        "flake.lock",
        """\
        "locked": {
          "lastModified": 1709126324,
          "narHash": "sha256-{rand:b64:43}=",
          "rev": "{rand:h:40}",
          "type": "github"
        },
""",
    ),
    (
        "digest",
        "docs/verify.md",
        """\
The release tarball's SHA-512 is:

    {rand:h:128}
""",
    ),
    (
        "digest",
        "build/pip-log.txt",
        """\
Collecting idna==3.6
  Downloading idna-3.6-py3-none-any.whl (61 kB)
  Stored in directory: /root/.cache/pip/wheels/{rand:h:2}/{rand:h:2}/{rand:h:56}
""",
    ),
    (
        "digest",
        "uv.lock",
        """\
[[package]]
name = "anyio"
sdist = { url = "https://files.pythonhosted.org/packages/anyio-4.3.0.tar.gz", hash = "sha256:{rand:h:64}", size = 159642 }
""",
    ),
    # ---- identifiers that are not credentials ------------------------------------------------
    (
        "identifier",
        "logs/api.log",
        """\
2024-03-11T10:15:22.481Z INFO request_id={uuid} method=GET path=/v1/orders status=200 duration_ms=41
2024-03-11T10:15:22.502Z INFO trace_id={rand:h:32} span_id={rand:h:16} msg="order listed"
""",
    ),
    (
        "identifier",
        "azure/main.bicep.json",
        """\
{
  "tenantId": "{uuid}",
  "subscriptionId": "{uuid}",
  "clientId": "{uuid}",
  "resourceGroup": "rg-prod-weu"
}
""",
    ),
    (
        "identifier",
        "terraform.tfstate",
        """\
{
  "version": 4,
  "terraform_version": "1.7.4",
  "serial": 112,
  "lineage": "{uuid}",
  "resources": [{"type": "aws_instance", "instances": [{"attributes": {"id": "i-0{rand:h:16}", "ami": "ami-0{rand:h:16}"}}]}]
}
""",
    ),
    (
        "identifier",
        "App/App.csproj",
        """\
<PropertyGroup>
  <ProjectGuid>{{UUID}}</ProjectGuid>
  <UserSecretsId>{uuid}</UserSecretsId>
</PropertyGroup>
""",
    ),
    (
        "identifier",
        "Solution.sln",
        """\
Project("{{UUID}}") = "Api", "Api\\Api.csproj", "{{UUID}}"
EndProject
""",
    ),
    (
        "identifier",
        "http/response.txt",
        """\
HTTP/1.1 200 OK
x-amz-request-id: {rand:A0:16}
x-amz-id-2: {rand:b64:76}=
traceparent: 00-{rand:h:32}-{rand:h:16}-01
X-Request-Id: {uuid}
""",
    ),
    (
        "identifier",
        "config/google.json",
        """\
{
  "web": {
    "client_id": "{rand:0:12}-{rand:a0:32}.apps.googleusercontent.com",
    "project_id": "ledger-prod-311812",
    "auth_uri": "https://accounts.google.com/o/oauth2/auth"
  }
}
""",
    ),
    (
        "identifier",
        "data/users.csv",
        """\
id,external_id,email,created_at
1,{uuid},ana@example.org,2023-01-04
2,{uuid},bo@example.org,2023-01-05
""",
    ),
    (
        "identifier",
        "api/events.json",
        """\
{"id": "evt_{rand:Aa0:24}", "object": "event", "type": "invoice.paid", "request": {"id": "req_{rand:Aa0:14}"}}
""",
    ),
    (
        "identifier",
        "src/app/page.html",
        """\
<script id="__NEXT_DATA__" type="application/json">{"props":{},"page":"/","buildId":"{rand:Aa0_-:21}","isFallback":false}</script>
""",
    ),
    (
        "identifier",
        "ci/build-info.txt",
        """\
Build ID: {rand:h:40}
BUILD_NUMBER=4812
GIT_COMMIT={rand:h:40}
""",
    ),
    (
        "identifier",
        "docs/analytics.md",
        """\
Our Google Analytics measurement ID is G-{rand:A0:10}; the GTM container is GTM-{rand:A0:7}.
""",
    ),
    (
        "identifier",
        "config/segment.yml",
        """\
segment:
  source_id: {rand:Aa0:22}
  workspace_slug: harbor-labs
""",
    ),
    (
        "identifier",
        "kibana/export.ndjson",
        """\
{"id":"{uuid}","type":"dashboard","attributes":{"title":"API latency"},"references":[{"id":"{uuid}","type":"index-pattern"}]}
""",
    ),
    (
        "identifier",
        "settings.json",
        """\
{
  "workbench.colorTheme": "Default Dark+",
  "sync.gist": "{rand:h:32}",
  "telemetry.machineId": "{rand:h:64}"
}
""",
    ),
    (
        "identifier",
        "jobs/api.nomad.hcl",
        """\
job "api" {
  id = "api-{rand:h:8}"
  meta { deployment_id = "{uuid}" }
}
""",
    ),
    (
        "identifier",
        "stripe/prices.json",
        """\
{"price": "price_{rand:Aa0:24}", "product": "prod_{rand:Aa0:14}", "customer": "cus_{rand:Aa0:14}"}
""",
    ),
    (
        "identifier",
        "tokens/meta.json",
        """\
{
  "token_id": "{uuid}",
  "token_type": "Bearer",
  "key_id": "{rand:h:16}",
  "kid": "{rand:Aa0_-:43}",
  "expires_in": 3600
}
""",
    ),
    (
        "identifier",
        "k8s/secret-ref.yaml",
        """\
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: stripe
spec:
  secretStoreRef: { name: vault-backend, kind: ClusterSecretStore }
  data:
    - secretKey: api-key
      remoteRef: { key: secret/data/stripe, property: api_key }
""",
    ),
    (
        "identifier",
        "infra/outputs.json",
        """\
{
  "vpc_id": "vpc-0{rand:h:16}",
  "subnet_ids": ["subnet-0{rand:h:16}", "subnet-0{rand:h:16}"],
  "kms_key_arn": "arn:aws:kms:eu-west-1:123456789012:key/{uuid}",
  "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-{rand:Aa0:6}"
}
""",
    ),
    (
        "identifier",
        "openapi.yaml",
        """\
components:
  securitySchemes:
    ApiKeyAuth:
      type: apiKey
      in: header
      name: X-API-Key
""",
    ),
    (
        "identifier",
        "docs/csp.md",
        """\
Each response sets a fresh nonce, for example:

    Content-Security-Policy: script-src 'nonce-{rand:b64:22}=='
    <script nonce="{rand:b64:22}==">...</script>
""",
    ),
    (
        "identifier",
        "youtube/playlist.json",
        """\
{"playlistId": "PL{rand:Aa0_-:32}", "videoId": "{rand:Aa0_-:11}", "channelId": "UC{rand:Aa0_-:22}"}
""",
    ),
    (
        "identifier",
        "logs/sentry-event.json",
        """\
{"event_id": "{rand:h:32}", "release": "api@{rand:h:40}", "environment": "production"}
""",
    ),
    (
        "identifier",
        "docs/session.md",
        """\
Session ids look like `sess-{rand:h:8}`; correlation ids are UUIDs such as {uuid}.
""",
    ),
    (
        "identifier",
        "firebase.json",
        """\
{
  "hosting": { "site": "tally-prod", "public": "dist" },
  "emulators": { "auth": { "port": 9099 } }
}
""",
    ),
    (
        "identifier",
        "config/onesignal.json",
        """\
{ "appId": "{uuid}", "safari_web_id": "web.onesignal.auto.{uuid}" }
""",
    ),
    (
        "identifier",
        "db/schema.sql",
        """\
CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  key_hash char(64) NOT NULL,
  password_reset_token varchar(64)
);
""",
    ),
    (
        "identifier",
        "mobile/google-services.json",
        """\
{
  "project_info": { "project_number": "{rand:0:12}", "project_id": "tripnote-app" },
  "client": [{ "client_info": { "mobilesdk_app_id": "1:{rand:0:12}:android:{rand:h:16}" } }]
}
""",
    ),
    # ---- public keys and certificates ----------------------------------------------------------
    (
        "public key",
        ".ssh/authorized_keys",
        """\
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand:Aa0:43} dana@laptop
ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{rand:b64:300}= ci@runner
""",
    ),
    (
        "public key",
        "known_hosts",
        """\
github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand:Aa0:43}
|1|{rand:b64:27}=|{rand:b64:27}= ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{rand:b64:139}=
""",
    ),
    (
        "public key",
        "keys/signing.pub.pem",
        """\
{pem:PUBLIC KEY}
""",
    ),
    (
        "public key",
        "certs/ca.crt",
        """\
{pem:CERTIFICATE}
""",
    ),
    (
        "public key",
        "wg-peers.conf",
        """\
[Peer]
# laptop
PublicKey = {rand:b64:43}=
AllowedIPs = 10.8.0.3/32
""",
    ),
    (
        "public key",
        ".well-known/jwks.json",
        """\
{"keys": [{"kty": "RSA", "use": "sig", "kid": "{rand:Aa0_-:43}", "alg": "RS256",
  "n": "{rand:Aa0_-:342}", "e": "AQAB"}]}
""",
    ),
    (
        "public key",
        "src/push.ts",
        """\
const vapidPublicKey = 'B{rand:Aa0_-:86}';
navigator.serviceWorker.ready.then(r => r.pushManager.subscribe({ applicationServerKey: vapidPublicKey }));
""",
    ),
    (
        "public key",
        "contracts/addresses.json",
        """\
{
  "usdc": "0x{rand:h:40}",
  "router": "0x{rand:h:40}",
  "treasury": "0x{rand:h:40}"
}
""",
    ),
    (
        "public key",
        "age/recipients.txt",
        """\
# ops team
age1{rand:B32:58}
""",
    ),
    (
        "public key",
        "docs/verify.md",
        """\
Releases are signed with minisign; the public key is:

    RW{rand:b64:54}
""",
    ),
    (
        "public key",
        "config/ed25519.toml",
        """\
[signing]
public_key = "{rand:h:64}"
algorithm = "ed25519"
""",
    ),
    (
        "public key",
        "KEYS",
        """\
pub   rsa4096 2021-03-01 [SC]
      {rand:H:40}
uid           [ultimate] Release Signing <release@example.org>
""",
    ),
    (
        "public key",
        "src/stripe.js",
        """\
const stripe = Stripe('pk_live_{rand:Aa0:99}');
""",
    ),
    # ---- fixtures that say they are fake --------------------------------------------------------
    (
        "fake fixture",
        "tests/test_client.py",
        """\
FAKE_API_KEY = "fake-api-key-for-tests"
client = Client(api_key="test-key-not-real")
""",
    ),
    (
        "fake fixture",
        "tests/fixtures/config.yml",
        """\
acme:
  api_key: 0000000000000000000000000000000000000000
  secret: 1234567890abcdef1234567890abcdef
""",
    ),
    (
        "fake fixture",
        "spec/support/stubs.rb",
        """\
let(:token) { "deadbeefdeadbeefdeadbeefdeadbeef" }
let(:password) { "password" }
""",
    ),
    (
        "fake fixture",
        "test/mocks.js",
        """\
const MOCK_TOKEN = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const DUMMY_SECRET = 'abcdefghijklmnopqrstuvwxyz123456';
""",
    ),
    (
        "fake fixture",
        "src/__tests__/auth.test.ts",
        """\
const password = 'test-password';
expect(hash(password)).not.toEqual(password);
""",
    ),
    (
        "fake fixture",
        "tests/conftest.py",
        """\
@pytest.fixture
def settings():
    return Settings(secret_key="insecure-test-secret", db_password="{lit:postgres}")
""",
    ),
    (
        "fake fixture",
        "docker-compose.test.yml",
        """\
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: postgres
      POSTGRES_USER: postgres
""",
    ),
    (
        "fake fixture",
        "tests/fixtures/vcr/orders.yaml",
        """\
- request:
    headers:
      Authorization:
      - Bearer <REDACTED>
      X-Api-Key:
      - FILTERED
""",
    ),
    (
        "fake fixture",
        "testdata/jwt.txt",
        """\
# an unsigned JWT (alg none) used by the parser tests
{b64u:{"alg":"none","typ":"JWT"}}.{b64u:{"sub":"test"}}.
""",
    ),
    # ---- encoded assets ------------------------------------------------------------------------
    (
        "encoded asset",
        "src/styles.css",
        """\
.logo { background: url("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQ{rand:b64:180}==") no-repeat; }
""",
    ),
    (
        "encoded asset",
        "src/fonts.css",
        """\
@font-face {
  font-family: "Inter";
  src: url(data:font/woff2;base64,d09GMgABAAAAA{rand:b64:400}) format("woff2");
}
""",
    ),
    (
        "encoded asset",
        "assets/icon.svg",
        """\
<svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ{rand:b64:240}=" width="16"/></svg>
""",
    ),
    (
        "encoded asset",
        "dist/app.js.map",
        """\
{"version":3,"file":"app.js","sources":["../src/app.ts"],"names":["token","apiKey","secret"],"mappings":"AAAA,SAASA,{rand:A:6},GAAG,{rand:A:4};AACA,OAAO"}
""",
    ),
    (
        "encoded asset",
        "README.md",
        """\
[![build](https://img.shields.io/badge/build-passing-green?logo=data:image/svg%2bxml;base64,PHN2ZyB4bWxucz0i{rand:b64:120})](https://ci.example.org)
""",
    ),
    # ---- minified and generated code -------------------------------------------------------------
    (
        "generated code",
        "dist/vendor.min.js",
        """\
!function(e,t){"use strict";var n=t.apiKey||e.key,r=function(o){return o.token};e.secret=n}(window,{});
""",
    ),
    (
        "generated code",
        "dist/chunk-map.js",
        """\
var chunks={"{rand:h:20}":"vendors-node_modules_lodash","{rand:h:20}":"src_pages_login"};
""",
    ),
    (
        "generated code",
        "src/styles.module.css.d.ts",
        """\
export const button = "Button_button__{rand:Aa0_-:5}";
export const primary = "Button_primary__{rand:Aa0_-:5}";
""",
    ),
    (
        "generated code",
        "public/index.html",
        """\
<div class="css-{rand:a0:7} e1{rand:a0:6}"><span class="_3xK{rand:Aa0_:5}">Sign in</span></div>
""",
    ),
    (
        "generated code",
        "proto/api_pb2.py",
        """\
DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'\\n\\tapi.proto\\x12\\x03api\\"\\x1f\\n\\x0cTokenRequest\\x12\\x0f\\n\\x07api_key\\x18\\x01 \\x01(\\t')
""",
    ),
    (
        "generated code",
        "src/graphql/generated.ts",
        """\
export const LoginDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","name":{"kind":"Name","value":"Login"}}]} as unknown as DocumentNode<LoginMutation, LoginMutationVariables>;
export type ApiKeyFragment = { __typename?: 'ApiKey', id: string, lastFour: string };
""",
    ),
    (
        "generated code",
        "include/config.h",
        """\
#define SECRET_STORE_PATH "/etc/app/secrets"
#define API_TOKEN_HEADER "X-Api-Token"
#define PASSWORD_MIN_LENGTH 12
""",
    ),
    (
        "generated code",
        "src/enums.py",
        """\
class Field(enum.Enum):
    API_KEY = "api_key"
    PASSWORD = "password"
    ACCESS_TOKEN = "access_token"
""",
    ),
    (
        "generated code",
        "src/forms.py",
        """\
password = forms.CharField(widget=forms.PasswordInput, min_length=12)
api_token = models.CharField(max_length=64, unique=True, default=generate_token)
""",
    ),
    (
        "generated code",
        "src/auth.ts",
        """\
const token = await getAccessTokenSilently();
const password = form.elements.namedItem('password') as HTMLInputElement;
localStorage.setItem('authToken', token);
""",
    ),
    (
        "generated code",
        "src/crypto.go",
        """\
key := make([]byte, 32)
if _, err := rand.Read(key); err != nil { return err }
secret := base64.StdEncoding.EncodeToString(key)
""",
    ),
    # ---- translations and messages ------------------------------------------------------------
    (
        "translation",
        "locales/en.json",
        """\
{
  "auth.password.label": "Password",
  "auth.token.expired": "Your session token has expired. Please sign in again.",
  "settings.apiKey.help": "Create an API key in your account settings",
  "errors.invalidSecret": "The client secret you entered is invalid"
}
""",
    ),
    (
        "translation",
        "config/locales/de.yml",
        """\
de:
  devise:
    passwords:
      send_instructions: "Sie erhalten in wenigen Minuten eine E-Mail mit einer Anleitung."
  api_key:
    regenerate: "API-Schlüssel neu erzeugen"
""",
    ),
    (
        "translation",
        "res/values-fr/strings.xml",
        """\
<resources>
    <string name="password_hint">Mot de passe</string>
    <string name="api_key_missing">Clé API manquante</string>
</resources>
""",
    ),
    (
        "translation",
        "po/es.po",
        """\
msgid "Your password must contain at least 12 characters"
msgstr "Su contraseña debe contener al menos 12 caracteres"
""",
    ),
    (
        "translation",
        "docs/errors.md",
        """\
| Code | Message |
|------|---------|
| 401  | `invalid_token`: the access token is expired or revoked |
| 403  | `insufficient_scope`: the token lacks the `write` scope |
""",
    ),
    # ---- prose and config that talk about secrets -----------------------------------------
    (
        "prose",
        "docs/security.md",
        """\
Rotate the API key every 90 days. Never paste a token into a ticket; use the vault at
https://vault.corp.example/ui/vault/secrets/kv/list/teams/payments instead.
""",
    ),
    (
        "prose",
        "CHANGELOG.md",
        """\
- The `token` option of `Client()` is now keyword-only.
- `api_key` accepts a callable returning the key (for rotation).
- Passwords shorter than 12 characters are rejected.
""",
    ),
    (
        "prose",
        "nginx/site.conf",
        """\
auth_basic "Restricted";
auth_basic_user_file /etc/nginx/.htpasswd;
ssl_certificate_key /etc/ssl/private/site.key;
""",
    ),
    (
        "prose",
        "sshd_config",
        """\
PasswordAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
""",
    ),
    (
        "prose",
        "postgresql.conf",
        """\
password_encryption = scram-sha-256
ssl_key_file = 'server.key'
""",
    ),
    (
        "prose",
        "docs/faq.md",
        """\
**Where do I find my key?** Settings → API → Keys. The key starts with `live_` in
production and `test_` in the sandbox.
""",
    ),
    (
        "prose",
        "pg_hba.conf",
        """\
host    all    all    10.0.0.0/8    scram-sha-256
local   all    postgres             peer
""",
    ),
    (
        "prose",
        "ansible.cfg",
        """\
[defaults]
vault_password_file = ~/.vault_pass.txt
private_key_file = ~/.ssh/ansible_ed25519
""",
    ),
    (
        "prose",
        ".gitignore",
        """\
.env
*.pem
secrets.toml
credentials.json
""",
    ),
    (
        "prose",
        "docs/architecture.md",
        """\
The gateway checks the `X-Api-Key` header against the `api_keys` table (bcrypt digests) and
issues a short-lived JWT signed with the key in KMS (`alias/gateway-signing`).
""",
    ),
    # ---- encrypted, masked and referenced values ------------------------------------------
    (
        "encrypted value",
        "group_vars/prod/vault.yml",
        """\
mysql_root_password: !vault |
          $ANSIBLE_VAULT;1.1;AES256
          {rand:h:64}
          {rand:h:64}
          {rand:h:32}
""",
    ),
    (
        "encrypted value",
        "secrets.enc.yaml",
        """\
db:
    password: ENC[AES256_GCM,data:{rand:b64:24}==,iv:{rand:b64:43}=,tag:{rand:b64:22}==,type:str]
sops:
    lastmodified: "2024-03-01T10:00:00Z"
    mac: ENC[AES256_GCM,data:{rand:b64:86}==,iv:{rand:b64:43}=,tag:{rand:b64:22}==,type:str]
""",
    ),
    (
        "encrypted value",
        "k8s/sealed-secret.yaml",
        """\
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: stripe
spec:
  encryptedData:
    api-key: AgB{rand:b64:300}==
""",
    ),
    (
        "encrypted value",
        ".travis.yml",
        """\
env:
  global:
    - secure: "{rand:b64:342}="
""",
    ),
    (
        "encrypted value",
        "config/credentials.yml.enc",
        """\
{rand:b64:120}--{rand:b64:16}--{rand:b64:22}==
""",
    ),
    (
        "masked value",
        "logs/app.log",
        """\
2024-03-11 10:15:22 DEBUG using key=******** for weather provider
2024-03-11 10:15:22 DEBUG headers: {'Authorization': 'Bearer [REDACTED]', 'X-Api-Key': '***'}
""",
    ),
    (
        "masked value",
        "ci/output.txt",
        """\
+ docker login -u ci -p *** registry.corp.example
Configuring client with api token sk_live_****************4242
""",
    ),
    (
        "masked value",
        "docs/screenshot-notes.md",
        """\
The dashboard shows the key as `a1b2••••••••••••••••••••••••f9e8`; click *Reveal* to copy it.
""",
    ),
    (
        "secret reference",
        ".env",
        """\
DB_PASSWORD_FILE=/run/secrets/db_password
STRIPE_KEY_SECRET_NAME=prod/stripe/api-key
TOKEN_URL=https://oauth2.googleapis.com/token
""",
    ),
    (
        "secret reference",
        "config/aws.yml",
        """\
database:
  password_ssm_parameter: /prod/db/password
  secret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db
""",
    ),
    (
        "secret reference",
        "docker-compose.yml",
        """\
services:
  api:
    secrets:
      - db_password
secrets:
  db_password:
    file: ./secrets/db_password.txt
""",
    ),
    (
        "secret reference",
        "src/settings.py",
        """\
PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"}]
""",
    ),
    (
        "secret reference",
        "infra/dynamo.tf",
        """\
resource "aws_dynamodb_table" "sessions" {
  hash_key  = "session_id"
  range_key = "created_at"
}
""",
    ),
    (
        "secret reference",
        "src/cache.py",
        """\
cache_key = f"user:{user_id}:profile"
primary_key = "id"
sort_key = "created_at"
""",
    ),
    (
        "encoded placeholder",
        "k8s/secret.example.yaml",
        """\
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
data:
  password: {lit:Y2hhbmdlbWU=}
  username: cG9zdGdyZXM=
""",
    ),
    (
        "placeholder",
        ".env.example",
        """\
STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx
SENDGRID_API_KEY=SG.xxxxxxxx.xxxxxxxx
TWILIO_AUTH_TOKEN=your_auth_token
""",
    ),
    (
        "placeholder",
        "docs/keys.md",
        """\
Keys are 32 hexadecimal characters, for example `0123456789abcdef0123456789abcdef`.
""",
    ),
    (
        "identifier",
        ".env",
        """\
AZURE_TENANT_ID={uuid}
AZURE_CLIENT_ID={uuid}
AZURE_SUBSCRIPTION_ID={uuid}
""",
    ),
    (
        "identifier",
        "templates/signup.html",
        """\
<div class="h-captcha" data-sitekey="{uuid}"></div>
<div class="g-recaptcha" data-sitekey="6L{rand:Aa0_-:38}"></div>
""",
    ),
    (
        "digest",
        "Podfile.lock",
        """\
SPEC CHECKSUMS:
  Alamofire: {rand:h:40}
  Firebase: {rand:h:40}

PODFILE CHECKSUM: {rand:h:40}
""",
    ),
    (
        "digest",
        "mix.lock",
        """\
%{
  "jason": {:hex, :jason, "1.4.1", "{rand:h:64}", [:mix], [], "hexpm", "{rand:h:64}"},
}
""",
    ),
    (
        "digest",
        "pubspec.lock",
        """\
  http:
    dependency: "direct main"
    description:
      name: http
      sha256: "{rand:h:64}"
      url: "https://pub.dev"
""",
    ),
    (
        "digest",
        "gradle/verification-metadata.xml",
        """\
<component group="com.squareup.okhttp3" name="okhttp" version="4.12.0">
   <artifact name="okhttp-4.12.0.jar">
      <sha256 value="{rand:h:64}" origin="Generated by Gradle"/>
   </artifact>
</component>
""",
    ),
    (
        "digest",
        "Package.resolved",
        """\
      {
        "identity" : "alamofire",
        "kind" : "remoteSourceControl",
        "location" : "https://github.com/Alamofire/Alamofire.git",
        "state" : { "revision" : "{rand:h:40}", "version" : "5.9.0" }
      }
""",
    ),
    (
        "digest",
        "packages.lock.json",
        """\
      "Newtonsoft.Json": {
        "type": "Direct",
        "requested": "[13.0.3, )",
        "resolved": "13.0.3",
        "contentHash": "{rand:b64:86}=="
      }
""",
    ),
    (
        "digest",
        "deno.lock",
        """\
{
  "version": "3",
  "remote": {
    "https://deno.land/std@0.200.0/path/mod.ts": "{rand:h:64}"
  }
}
""",
    ),
    (
        "digest",
        "app/views/layouts/application.html.erb",
        """\
<link rel="stylesheet" href="/assets/application-{rand:h:64}.css" />
<script src="/assets/application-{rand:h:64}.js"></script>
""",
    ),
    (
        "digest",
        "notes/git.txt",
        """\
$ git show-ref
{rand:h:40} refs/heads/main
{rand:h:40} refs/tags/v2.4.1
""",
    ),
    (
        "digest",
        "requirements.txt",
        """\
internal-utils @ git+https://github.com/acme/internal-utils@{rand:h:40}
""",
    ),
    (
        "translation",
        "locales/sv.json",
        """\
{ "password": "Lösenord", "apiKey": "API-nyckel", "token": "Token", "secret": "Hemlighet" }
""",
    ),
    (
        "identifier",
        "docker/images.txt",
        """\
REPOSITORY          TAG       IMAGE ID       CREATED        SIZE
ghcr.io/quill/api   2.3.0     {rand:h:12}   2 days ago     187MB
""",
    ),
    # ---- random-looking values that are not secrets ---------------------------------------------
    (
        "random non-secret",
        "docs/oauth.md",
        """\
The authorization request carries `state={rand:Aa0:22}` and
`code_challenge={rand:Aa0_-:43}` with `code_challenge_method=S256`.
""",
    ),
    (
        "random non-secret",
        "test/snapshots/__snapshots__/form.test.js.snap",
        """\
exports[`LoginForm renders 1`] = `
<form data-testid="login-{rand:a0:10}">
`;
""",
    ),
    (
        "random non-secret",
        "config/uploads.yml",
        """\
uploads:
  bucket: media-{rand:a0:12}
  cdn: https://d{rand:a0:13}.cloudfront.net
""",
    ),
    (
        "random non-secret",
        "README.md",
        """\
Invite link for the community Discord: https://discord.gg/{rand:Aa0:8}
Docs: https://docs.google.com/document/d/{rand:Aa0_-:44}/edit
""",
    ),
    (
        "random non-secret",
        "links.md",
        """\
- Figma: https://www.figma.com/file/{rand:Aa0:22}/Design-System
- Loom: https://www.loom.com/share/{rand:h:32}
""",
    ),
    (
        "random non-secret",
        "src/ids.ts",
        """\
export const FEATURE_FLAG_IDS = { checkoutV2: '{rand:h:24}', darkMode: '{rand:h:24}' };
""",
    ),
    (
        "random non-secret",
        "fixtures/mongo.json",
        """\
[{"_id": {"$oid": "{rand:h:24}"}, "name": "Widget", "sku": "W-1001"}]
""",
    ),
    (
        "random non-secret",
        "logs/deploy.log",
        """\
Uploading artifact app-{rand:h:12}.tar.gz (sha256 {rand:h:64})
Deployment {uuid} finished in 42s
""",
    ),
    (
        "random non-secret",
        "config/captcha.yml",
        """\
captcha:
  site_key: 6L{rand:Aa0_-:38}
""",
    ),
    (
        "random non-secret",
        "static/manifest.webmanifest",
        """\
{"name": "Tally", "id": "/?source=pwa", "start_url": "/", "gcm_sender_id": "103953800507"}
""",
    ),
)

DOCUMENTED: tuple[tuple[str, str], ...] = (
    (
        "docs/aws.md",
        """\
[default]
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
""",
    ),
    (
        "docs/aws-sts.md",
        """\
export AWS_ACCESS_KEY_ID=ASIAIOSFODNN7EXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
""",
    ),
    (
        "docs/jwt.md",
        """\
Paste a token such as
eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c
into the debugger.
""",
    ),
    (
        "docs/oauth2.md",
        """\
     HTTP/1.1 200 OK
     Content-Type: application/json;charset=UTF-8

     {
       "access_token":"2YotnFZFEjr1zCsicMWpAA",
       "token_type":"example",
       "expires_in":3600,
       "refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA"
     }
""",
    ),
    (
        "docs/basic-auth.md",
        """\
    Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==
""",
    ),
    (
        "docs/azurite.md",
        """\
DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;
""",
    ),
    (
        "docs/pkce.md",
        """\
code_verifier = dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
code_challenge = E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM
""",
    ),
    (
        "docs/postgres.md",
        """\
    postgresql://user:secret@localhost
    postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp
""",
    ),
    (
        "docs/hotp.md",
        """\
The test secret of RFC 4226 is the ASCII string "12345678901234567890"
(base32: GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ).
""",
    ),
    (
        "docs/express.md",
        """\
app.use(session({ secret: 'keyboard cat', resave: false, saveUninitialized: true }))
""",
    ),
    (
        "docs/stripe.md",
        """\
curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:
""",
    ),
    (
        "docs/digest.md",
        """\
    Authorization: Digest username="Mufasa",
        realm="testrealm@host.com",
        nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093",
        uri="/dir/index.html",
        response="6629fae49393a05397450978507c4ef1",
        opaque="5ccc069c403ebaf9f0171e9517f40e41"
""",
    ),
)
