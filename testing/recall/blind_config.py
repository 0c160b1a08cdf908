"""Blind corpus positives in configuration: .env, YAML, JSON, INI, TOML, properties,
Dockerfiles, Terraform, XML and the credential files of well-known tools.

``(family, mechanism, path, text)``; ``§`` marks where the secret starts (see blind.py).
"""

from __future__ import annotations

CONFIG: tuple[tuple[str, str, str, str], ...] = (
    # ---- .env files -------------------------------------------------------------
    (
        "honeycomb",
        "assign",
        ".env",
        """\
NODE_ENV=production
PORT=8080
HONEYCOMB_WRITEKEY=§{rand:h:32}
HONEYCOMB_DATASET=api-prod
""",
    ),
    (
        "logzio",
        "assign",
        ".env.production",
        """\
# shipping
LOGZIO_TOKEN=§{rand:Aa:32}
LOGZIO_LISTENER=listener-eu.logz.io
""",
    ),
    (
        "bugsnag",
        "assign",
        "web/.env",
        """\
REACT_APP_API_URL=https://api.shopfront.io
REACT_APP_BUGSNAG_KEY=§{rand:h:32}
""",
    ),
    (
        "rollbar",
        "assign",
        ".env",
        """\
ROLLBAR_TOKEN="§{rand:h:32}"
ROLLBAR_ENV=staging
""",
    ),
    (
        "pagerduty",
        "assign",
        "ops/.env",
        """\
PD_ROUTING_KEY=§{rand:h:32}
PD_SERVICE=checkout
""",
    ),
    (
        "postmark",
        "uuid-secret",
        ".env",
        """\
MAIL_DRIVER=postmark
POSTMARK_TOKEN=§{uuid}
MAIL_FROM_ADDRESS=noreply@tallyhq.com
""",
    ),
    (
        "mailgun",
        "assign",
        "backend/.env",
        """\
MAILGUN_DOMAIN=mg.fernbrook.app
MAILGUN_SECRET=§{rand:h:32}-{rand:h:8}-{rand:h:8}
""",
    ),
    (
        "sparkpost",
        "assign",
        ".env.local",
        """\
SPARKPOST_KEY=§{rand:h:40}
""",
    ),
    (
        "vonage",
        "assign",
        ".env",
        """\
NEXMO_API_KEY={rand:h:8}
NEXMO_API_SECRET=§{rand:Aa0:16}
""",
    ),
    (
        "plivo",
        "assign",
        ".env",
        """\
PLIVO_AUTH_ID=MA{rand:A0:18}
PLIVO_AUTH_TOKEN=§{rand:Aa0:40}
""",
    ),
    (
        "messagebird",
        "assign",
        "sms/.env",
        """\
MESSAGEBIRD_ACCESS_KEY=§{rand:Aa0:25}
MESSAGEBIRD_ORIGINATOR=Clinic
""",
    ),
    (
        "sinch",
        "assign",
        ".env",
        """\
SINCH_SERVICE_PLAN_ID={rand:h:32}
SINCH_API_TOKEN=§{rand:h:32}
""",
    ),
    (
        "braintree",
        "assign",
        ".env",
        """\
BT_ENVIRONMENT=production
BT_MERCHANT_ID={rand:a0:16}
BT_PUBLIC_KEY={rand:a0:16}
BT_PRIVATE_KEY=§{rand:h:32}
""",
    ),
    (
        "paypal",
        "assign",
        ".env",
        """\
PAYPAL_MODE=live
PAYPAL_CLIENT_ID={rand:Aa0_-:80}
PAYPAL_CLIENT_SECRET=§{rand:Aa0_-:80}
""",
    ),
    (
        "razorpay",
        "assign",
        ".env",
        """\
RAZORPAY_KEY_ID=rzp_live_{rand:Aa0:14}
RAZORPAY_KEY_SECRET=§{rand:Aa0:24}
""",
    ),
    (
        "authorize.net",
        "assign",
        ".env",
        """\
AUTHNET_LOGIN_ID={rand:Aa0:9}
AUTHNET_TRANSACTION_KEY=§{rand:Aa0:16}
""",
    ),
    (
        "paddle",
        "assign",
        ".env",
        """\
PADDLE_VENDOR_ID=123456
PADDLE_VENDOR_AUTH_CODE=§{rand:h:50}
""",
    ),
    (
        "tomtom",
        "assign",
        ".env",
        """\
VITE_TOMTOM_KEY=§{rand:Aa0:32}
""",
    ),
    (
        "opencage",
        "assign",
        ".env",
        """\
OPENCAGE_API_KEY=§{rand:h:32}
""",
    ),
    (
        "openweathermap",
        "assign",
        "weather-bot/.env",
        """\
OWM_APPID=§{rand:h:32}
CITY=Lisbon
""",
    ),
    (
        "weatherapi",
        "assign",
        ".env",
        """\
WEATHER_KEY=§{rand:h:31}
""",
    ),
    (
        "tomorrow.io",
        "assign",
        ".env",
        """\
TOMORROWIO_APIKEY=§{rand:Aa0:32}
""",
    ),
    (
        "circleci",
        "assign",
        ".env",
        """\
CIRCLE_TOKEN=§{rand:h:40}
""",
    ),
    (
        "codecov",
        "uuid-secret",
        ".env.ci",
        """\
CODECOV_TOKEN=§{uuid}
""",
    ),
    (
        "snyk",
        "uuid-secret",
        ".env",
        """\
SNYK_TOKEN=§{uuid}
""",
    ),
    (
        "heroku",
        "uuid-secret",
        ".env",
        """\
HEROKU_API_KEY=§{uuid}
HEROKU_APP=brisk-tundra-4821
""",
    ),
    (
        "vercel",
        "assign",
        ".env",
        """\
VERCEL_TOKEN=§{rand:Aa0:24}
VERCEL_ORG_ID=team_{rand:Aa0:24}
""",
    ),
    (
        "linode",
        "assign",
        ".env",
        """\
LINODE_TOKEN=§{rand:h:64}
""",
    ),
    (
        "hetzner",
        "assign",
        ".env",
        """\
HCLOUD_TOKEN=§{rand:Aa0:64}
""",
    ),
    (
        "vultr",
        "assign",
        ".env",
        """\
VULTR_API_KEY=§{rand:A0:36}
""",
    ),
    (
        "scaleway",
        "uuid-secret",
        ".env",
        """\
SCW_ACCESS_KEY=SCW{rand:A0:17}
SCW_SECRET_KEY=§{uuid}
""",
    ),
    (
        "cloudflare",
        "assign",
        ".env",
        """\
CF_API_EMAIL=ops@lumenpay.io
CF_API_KEY=§{rand:h:37}
""",
    ),
    (
        "fastly",
        "assign",
        ".env",
        """\
FASTLY_API_TOKEN=§{rand:Aa0_-:32}
""",
    ),
    (
        "segment",
        "assign",
        ".env",
        """\
SEGMENT_WRITE_KEY=§{rand:Aa0:32}
""",
    ),
    (
        "mixpanel",
        "assign",
        ".env",
        """\
MIXPANEL_PROJECT_TOKEN={rand:h:32}
MIXPANEL_SECRET=§{rand:h:32}
""",
    ),
    (
        "amplitude",
        "assign",
        ".env",
        """\
AMPLITUDE_API_KEY={rand:h:32}
AMPLITUDE_SECRET_KEY=§{rand:h:32}
""",
    ),
    (
        "pipedrive",
        "assign",
        ".env",
        """\
PIPEDRIVE_API_TOKEN=§{rand:h:40}
""",
    ),
    (
        "zendesk",
        "assign",
        ".env",
        """\
ZENDESK_SUBDOMAIN=brightdesk
ZENDESK_EMAIL=support@brightdesk.com
ZENDESK_TOKEN=§{rand:Aa0:40}
""",
    ),
    (
        "freshdesk",
        "assign",
        ".env",
        """\
FRESHDESK_DOMAIN=acmehelp
FRESHDESK_APIKEY=§{rand:Aa0:20}
""",
    ),
    (
        "activecampaign",
        "assign",
        ".env",
        """\
AC_API_URL=https://acme.api-us1.com
AC_API_KEY=§{rand:h:72}
""",
    ),
    (
        "todoist",
        "assign",
        ".env",
        """\
TODOIST_TOKEN=§{rand:h:40}
""",
    ),
    (
        "typesense",
        "assign",
        ".env",
        """\
TYPESENSE_HOST=search.internal
TYPESENSE_ADMIN_KEY=§{rand:Aa0:32}
""",
    ),
    (
        "meilisearch",
        "assign",
        ".env",
        """\
MEILI_MASTER_KEY=§{rand:Aa0_-:44}
""",
    ),
    (
        "spotify",
        "assign",
        ".env",
        """\
SPOTIPY_CLIENT_ID={rand:h:32}
SPOTIPY_CLIENT_SECRET=§{rand:h:32}
SPOTIPY_REDIRECT_URI=http://localhost:8888/callback
""",
    ),
    (
        "tmdb",
        "assign",
        ".env",
        """\
TMDB_KEY=§{rand:h:32}
""",
    ),
    (
        "giphy",
        "assign",
        ".env",
        """\
GIPHY_API_KEY=§{rand:Aa0:32}
""",
    ),
    (
        "unsplash",
        "assign",
        ".env",
        """\
UNSPLASH_ACCESS_KEY=§{rand:Aa0_-:43}
""",
    ),
    (
        "mistral",
        "assign",
        ".env",
        """\
MISTRAL_API_KEY=§{rand:Aa0:32}
""",
    ),
    (
        "together",
        "assign",
        ".env",
        """\
TOGETHER_API_KEY=§{rand:h:64}
""",
    ),
    (
        "cohere",
        "assign",
        ".env",
        """\
CO_API_KEY=§{rand:Aa0:40}
""",
    ),
    (
        "assemblyai",
        "assign",
        ".env",
        """\
ASSEMBLYAI_KEY=§{rand:h:32}
""",
    ),
    (
        "deepgram",
        "assign",
        ".env",
        """\
DEEPGRAM_KEY=§{rand:h:40}
""",
    ),
    (
        "elevenlabs",
        "assign",
        ".env",
        """\
ELEVEN_API_KEY=§{rand:h:32}
VOICE_ID={rand:Aa0:20}
""",
    ),
    (
        "binance",
        "assign",
        "bot/.env",
        """\
BINANCE_API_KEY=§{rand:Aa0:64}
BINANCE_API_SECRET={rand:Aa0:64}
""",
    ),
    (
        "binance",
        "assign",
        "bot/.env",
        """\
BINANCE_KEY={rand:Aa0:64}
BINANCE_SECRET=§{rand:Aa0:64}
""",
    ),
    (
        "kucoin",
        "uuid-secret",
        "trader/.env",
        """\
KUCOIN_KEY={rand:h:24}
KUCOIN_SECRET=§{uuid}
KUCOIN_PASSPHRASE=tradingbot
""",
    ),
    (
        "okx",
        "assign",
        ".env",
        """\
OKX_API_KEY={uuid}
OKX_SECRET_KEY=§{rand:H:32}
OKX_PASSPHRASE={human}
""",
    ),
    (
        "bybit",
        "assign",
        ".env",
        """\
BYBIT_KEY={rand:Aa0:18}
BYBIT_SECRET=§{rand:Aa0:36}
""",
    ),
    (
        "etherscan",
        "assign",
        "hardhat/.env",
        """\
ETHERSCAN_API_KEY=§{rand:A0:34}
""",
    ),
    (
        "ethereum",
        "assign",
        "hardhat/.env",
        """\
ALCHEMY_URL=https://eth-sepolia.g.alchemy.com/v2/{rand:Aa0_-:32}
DEPLOYER_PRIVATE_KEY=§0x{rand:h:64}
""",
    ),
    (
        "ethereum",
        "mnemonic",
        "truffle/.env",
        """\
MNEMONIC="§{words:12}"
INFURA_PROJECT_ID={rand:h:32}
""",
    ),
    (
        "moralis",
        "assign",
        ".env",
        """\
MORALIS_API_KEY=§{rand:Aa0:64}
""",
    ),
    (
        "shipstation",
        "assign",
        ".env",
        """\
SHIPSTATION_KEY={rand:h:32}
SHIPSTATION_SECRET=§{rand:h:32}
""",
    ),
    (
        "ups",
        "assign",
        ".env",
        """\
UPS_CLIENT_ID={rand:Aa0:48}
UPS_CLIENT_SECRET=§{rand:Aa0:64}
""",
    ),
    (
        "fedex",
        "assign",
        ".env",
        """\
FEDEX_API_KEY=l7{rand:h:30}
FEDEX_SECRET=§{rand:h:32}
""",
    ),
    (
        "auth0",
        "assign",
        ".env",
        """\
AUTH0_DOMAIN=ridgeline.eu.auth0.com
AUTH0_CLIENT_ID={rand:Aa0:32}
AUTH0_CLIENT_SECRET=§{rand:Aa0_-:64}
""",
    ),
    (
        "nextauth",
        "assign",
        ".env.local",
        """\
NEXTAUTH_URL=http://localhost:3000
NEXTAUTH_SECRET=§{rand:b64:43}=
""",
    ),
    (
        "laravel",
        "assign",
        ".env",
        """\
APP_NAME=Ledger
APP_ENV=production
APP_KEY=§base64:{rand:b64:43}=
APP_DEBUG=false
""",
    ),
    (
        "symfony",
        "assign",
        ".env",
        """\
APP_ENV=prod
APP_SECRET=§{rand:h:32}
""",
    ),
    (
        "db password",
        "human-password",
        ".env",
        """\
DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_DATABASE=shop
DB_USERNAME=shop
DB_PASSWORD=§{human}
""",
    ),
    (
        "smtp password",
        "human-password",
        ".env",
        """\
MAIL_HOST=smtp.office365.com
MAIL_PORT=587
MAIL_USERNAME=reports@kestrel-legal.com
MAIL_PASSWORD=§{human}
""",
    ),
    (
        "redis",
        "human-password",
        ".env",
        """\
REDIS_HOST=cache.internal
REDIS_PASS=§{human}
""",
    ),
    (
        "consul",
        "uuid-secret",
        "deploy/.env",
        """\
CONSUL_HTTP_ADDR=https://consul.service:8501
CONSUL_HTTP_TOKEN=§{uuid}
""",
    ),
    (
        "vault",
        "assign",
        ".env",
        """\
VAULT_ADDR=https://vault.corp:8200
VAULT_TOKEN=§s.{rand:Aa0:24}
""",
    ),
    (
        "jwt secret",
        "assign",
        "api/.env",
        """\
JWT_SECRET=§{rand:Aa0:48}
JWT_EXPIRES_IN=7d
""",
    ),
    (
        "app secret key",
        "punct-password",
        "server/.env",
        """\
SESSION_SECRET=§{punct:32}
""",
    ),
    (
        "influxdb",
        "assign",
        ".env",
        """\
INFLUX_URL=http://influx:8086
INFLUX_TOKEN=§{rand:Aa0_-:86}==
INFLUX_ORG=iot
""",
    ),
    (
        "mapquest",
        "glued",
        ".env",
        """\
MAPQUESTKEY=§{rand:Aa0:32}
""",
    ),
    (
        "infobip",
        "glued",
        ".env",
        """\
INFOBIPAPIKEY=§{rand:h:32}-{rand:h:32}
""",
    ),
    # ---- YAML ---------------------------------------------------------------------
    (
        "datadog",
        "nested",
        "datadog.yaml",
        """\
## Datadog agent
api_key: §{rand:h:32}
site: datadoghq.eu
logs_enabled: true
""",
    ),
    (
        "newrelic",
        "nested",
        "newrelic.yml",
        """\
common: &default_settings
  license_key: '§{rand:h:40}'
  app_name: Billing (Production)
  log_level: info
""",
    ),
    (
        "sentry",
        "nested",
        "config/sentry.yml",
        """\
sentry:
  org: harbor-labs
  project: api
  auth_token: §{rand:h:64}
""",
    ),
    (
        "airbrake",
        "nested",
        "config/airbrake.yml",
        """\
production:
  project_id: 241733
  project_key: §{rand:h:32}
""",
    ),
    (
        "coveralls",
        "assign",
        ".coveralls.yml",
        """\
service_name: travis-pro
repo_token: §{rand:Aa0:33}
""",
    ),
    (
        "unnamed vendor",
        "nested",
        "charts/api/values.yaml",
        """\
image:
  repository: registry.gitlab.com/fennel/api
  tag: 1.14.2
acme:
  enabled: true
  apiKey: "§{rand:Aa0:40}"
""",
    ),
    (
        "typesense",
        "nested",
        "values-prod.yaml",
        """\
search:
  typesense:
    host: typesense.search.svc
    apiKey: §{rand:Aa0:32}
""",
    ),
    (
        "clicksend",
        "pair",
        "k8s/deployment.yaml",
        """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notifier
spec:
  template:
    spec:
      containers:
        - name: notifier
          image: ghcr.io/quill/notifier:2.3.0
          env:
            - name: CLICKSEND_API_KEY
              value: "§{uuid}"
            - name: LOG_LEVEL
              value: info
""",
    ),
    (
        "pushover",
        "pair",
        "k8s/worker.yaml",
        """\
      containers:
        - name: worker
          env:
            - name: PUSHOVER_TOKEN
              value: §{rand:a0:30}
""",
    ),
    (
        "algolia",
        "assign",
        "k8s/configmap.yaml",
        """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  ALGOLIA_APP_ID: "{rand:A0:10}"
  ALGOLIA_ADMIN_KEY: "§{rand:h:32}"
""",
    ),
    (
        "db password",
        "encoded",
        "k8s/secret.yaml",
        """\
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
type: Opaque
data:
  username: {b64:postgres}
  password: §{b64:{human}}
""",
    ),
    (
        "stripe",
        "encoded",
        "manifests/api-secret.yaml",
        """\
apiVersion: v1
kind: Secret
metadata:
  name: stripe
type: Opaque
data:
  webhook-signing-secret: §{b64:{rand:Aa0:32}}
""",
    ),
    (
        "sendgrid",
        "assign",
        "manifests/secret.yaml",
        """\
apiVersion: v1
kind: Secret
metadata:
  name: sendgrid
stringData:
  token: §{rand:Aa0_-:48}
""",
    ),
    (
        "kubernetes token",
        "assign",
        "kubeconfig.yaml",
        """\
users:
- name: ci-deployer
  user:
    token: §{jwt}
""",
    ),
    (
        "db password",
        "assign",
        "docker-compose.yml",
        """\
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: app
      POSTGRES_PASSWORD: §{human}
""",
    ),
    (
        "grafana",
        "assign",
        "docker-compose.yml",
        """\
services:
  exporter:
    image: prom/pushgateway
    environment:
      - GRAFANA_CLOUD_API_KEY=§{b64:{"k":"{rand:Aa0:32}","n":"push","id":612934}}
""",
    ),
    (
        "ngrok",
        "cli-flag",
        "docker-compose.yml",
        """\
services:
  tunnel:
    image: ngrok/ngrok:latest
    command: http web:80 --authtoken §{rand:Aa0:27}_{rand:Aa0:21}
""",
    ),
    (
        "minio",
        "assign",
        "docker-compose.override.yml",
        """\
  minio:
    image: minio/minio
    environment:
      MINIO_ROOT_USER: admin
      MINIO_ROOT_PASSWORD: §{human}
""",
    ),
    (
        "netlify",
        "assign",
        ".github/workflows/deploy.yml",
        """\
name: deploy
on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    env:
      NETLIFY_SITE_ID: {uuid}
      NETLIFY_AUTH_TOKEN: §{rand:Aa0_-:43}
    steps:
      - uses: actions/checkout@v4
""",
    ),
    (
        "azure devops",
        "cli-flag",
        ".github/workflows/release.yml",
        """\
      - name: Publish
        run: |
          npx vsce publish -p §{rand:a0:52}
""",
    ),
    (
        "sonarqube",
        "assign",
        ".gitlab-ci.yml",
        """\
variables:
  SONAR_HOST_URL: https://sonar.corp.example
  SONAR_TOKEN: §{rand:h:40}
""",
    ),
    (
        "db password",
        "human-password",
        "group_vars/db.yml",
        """\
mysql_root_password: §{human}
mysql_databases:
  - name: wiki
""",
    ),
    (
        "windows password",
        "human-password",
        "inventory/host_vars/win01.yml",
        """\
ansible_user: Administrator
ansible_password: §{human}
ansible_connection: winrm
""",
    ),
    (
        "uptimerobot",
        "assign",
        "roles/monitoring/defaults/main.yml",
        """\
uptimerobot_api_key: "§u{rand:0:7}-{rand:h:24}"
""",
    ),
    (
        "db password",
        "nested",
        "src/main/resources/application.yml",
        """\
spring:
  datasource:
    url: jdbc:postgresql://db:5432/orders
    username: orders
    password: §{human}
""",
    ),
    (
        "twilio",
        "nested",
        "src/main/resources/application-prod.yml",
        """\
twilio:
  account-sid: AC{rand:h:32}
  auth-token: §{rand:h:32}
""",
    ),
    (
        "db password",
        "nested",
        "config/database.yml",
        """\
production:
  adapter: postgresql
  database: shop_production
  username: shop
  password: §{human}
""",
    ),
    (
        "db password",
        "nested",
        "config/mongoid.yml",
        """\
production:
  clients:
    default:
      database: catalog
      hosts:
        - mongo1.internal:27017
      options:
        user: catalog
        password: §{human}
""",
    ),
    (
        "app secret key",
        "assign",
        "config/secrets.yml",
        """\
production:
  secret_key_base: §{rand:h:128}
""",
    ),
    (
        "db password",
        "nested",
        "profiles.yml",
        """\
analytics:
  target: prod
  outputs:
    prod:
      type: snowflake
      account: xy12345.eu-west-1
      user: DBT_SVC
      password: §{human}
      role: TRANSFORMER
""",
    ),
    (
        "shippo",
        "nested",
        "serverless.yml",
        """\
provider:
  name: aws
  environment:
    SHIPPO_TOKEN: §shippo_live_{rand:h:40}
    STAGE: prod
""",
    ),
    (
        "zulip",
        "nested",
        "bots/config.yaml",
        """\
zulip:
  email: standup-bot@chat.fieldnotes.org
  key: §{rand:Aa0:32}
  site: https://chat.fieldnotes.org
""",
    ),
    (
        "opsgenie",
        "nested",
        "alertmanager.yml",
        """\
receivers:
  - name: oncall
    opsgenie_configs:
      - api_key: §{uuid}
        priority: P2
""",
    ),
    (
        "pagerduty",
        "nested",
        "alertmanager/alertmanager.yml",
        """\
receivers:
- name: pager
  pagerduty_configs:
  - service_key: §{rand:h:32}
""",
    ),
    (
        "smtp password",
        "nested",
        "alertmanager/config.yml",
        """\
global:
  smtp_smarthost: smtp.gmail.com:587
  smtp_from: alerts@harrowgate.io
  smtp_auth_username: alerts@harrowgate.io
  smtp_auth_password: §{rand:a:16}
""",
    ),
    (
        "db password",
        "nested",
        "provisioning/datasources/ds.yaml",
        """\
datasources:
  - name: Postgres
    type: postgres
    url: db:5432
    user: grafana
    secureJsonData:
      password: §{human}
""",
    ),
    (
        "crypt hash",
        "encoded",
        "traefik/dynamic.yml",
        """\
http:
  middlewares:
    dashboard-auth:
      basicAuth:
        users:
          - "§admin:$apr1${rand:Aa0:8}${rand:Aa0:22}"
""",
    ),
    (
        "cloudinary",
        "userinfo",
        "config/storage.yml",
        """\
cloudinary:
  service: Cloudinary
  url: §cloudinary://{rand:0:15}:{rand:Aa0_-:27}@dq8lmrz4x
""",
    ),
    (
        "launchdarkly",
        "nested",
        "config/flags.yml",
        """\
flags:
  provider: launchdarkly
  sdk_key: §sdk-{uuid}
""",
    ),
    (
        "split",
        "nested",
        "config/split.yml",
        """\
split:
  authorization_key: §{rand:a0:36}
  features_refresh_rate: 30
""",
    ),
    (
        "configcat",
        "compound",
        "appsettings.yaml",
        """\
featureFlags:
  configcatSdkKey: §{rand:Aa0_-:22}/{rand:Aa0_-:22}
""",
    ),
    (
        "unleash",
        "compound",
        "unleash.yaml",
        """\
unleash:
  url: https://flags.corp/api
  apiToken: "§*:production.{rand:h:64}"
""",
    ),
    (
        "optimizely",
        "nested",
        "optimizely.yml",
        """\
optimizely:
  sdkKey: §{rand:Aa0:22}
""",
    ),
    (
        "mux",
        "nested",
        "config/video.yml",
        """\
mux:
  token_id: {uuid}
  token_secret: §{rand:b64:75}
""",
    ),
    (
        "pusher",
        "nested",
        "config/pusher.yml",
        """\
pusher:
  app_id: "1423589"
  key: {rand:h:20}
  secret: §{rand:h:20}
  cluster: eu
""",
    ),
    (
        "ably",
        "compound",
        "config/realtime.yml",
        """\
ably:
  key: "§{rand:Aa0:6}.{rand:Aa0_-:6}:{rand:Aa0_-:43}"
""",
    ),
    (
        "agora",
        "nested",
        "config/agora.yaml",
        """\
agora:
  app_id: {rand:h:32}
  app_certificate: §{rand:h:32}
""",
    ),
    (
        "stream",
        "nested",
        "settings.yaml",
        """\
getstream:
  api_key: {rand:a0:12}
  api_secret: §{rand:a0:64}
""",
    ),
    (
        "kraken",
        "nested",
        "freqtrade/config.yml",
        """\
exchange:
  name: kraken
  key: "{rand:b64:56}"
  secret: "§{rand:b64:86}=="
""",
    ),
    (
        "confluent",
        "nested",
        "kafka/client.yml",
        """\
kafka:
  bootstrap: pkc-4nym6.eu-west-1.aws.confluent.cloud:9092
  sasl:
    username: {rand:A0:16}
    password: §{rand:b64:64}
""",
    ),
    (
        "okta",
        "nested",
        "okta.yaml",
        """\
okta:
  client:
    orgUrl: https://dev-481337.okta.com
    token: §00{rand:Aa0_-:40}
""",
    ),
    (
        "keycloak",
        "uuid-secret",
        "config/keycloak.yml",
        """\
keycloak:
  realm: staff
  resource: portal
  credentials:
    secret: §{uuid}
""",
    ),
    (
        "ghost",
        "compound",
        "config/blog.yml",
        """\
ghost:
  url: https://blog.trailmix.io
  admin_api_key: §{rand:h:24}:{rand:h:64}
""",
    ),
    (
        "contentful",
        "nested",
        "config/cms.yml",
        """\
contentful:
  space_id: {rand:a0:12}
  access_token: §{rand:Aa0_-:43}
""",
    ),
    (
        "storyblok",
        "nested",
        "nuxt.config.yml",
        """\
storyblok:
  accessToken: §{rand:Aa0:24}tt
""",
    ),
    (
        "mailjet",
        "nested",
        "config/mail.yml",
        """\
mailjet:
  api_key: {rand:h:32}
  api_secret: §{rand:h:32}
""",
    ),
    (
        "customer.io",
        "nested",
        "config/cio.yml",
        """\
customerio:
  site_id: {rand:h:20}
  api_key: §{rand:h:20}
""",
    ),
    (
        "wasabi",
        "nested",
        "config/storage.yml",
        """\
wasabi:
  service: S3
  endpoint: https://s3.eu-central-1.wasabisys.com
  access_key_id: {rand:A0:20}
  secret_access_key: §{rand:Aa0:40}
""",
    ),
    (
        "backblaze",
        "nested",
        "config/b2.yml",
        """\
b2:
  key_id: 00{rand:h:23}
  application_key: §K00{rand:Aa0_:28}
""",
    ),
    (
        "discord",
        "dotted",
        "bot/config.yml",
        """\
discord:
  token: §{rand:Aa0:24}.{rand:Aa0_-:6}.{rand:Aa0_-:38}
  prefix: "!"
""",
    ),
    (
        "twitch",
        "nested",
        "config/twitch.yaml",
        """\
twitch:
  client_id: {rand:a0:30}
  client_secret: §{rand:a0:30}
""",
    ),
    (
        "azure storage",
        "cloud-key",
        "config/azure.yml",
        """\
storage:
  account_name: stfinanceprod01
  account_key: §{rand:b64:86}==
""",
    ),
    # ---- JSON -------------------------------------------------------------------------
    (
        "mailchimp",
        "nested",
        "functions/.runtimeconfig.json",
        """\
{
  "mailchimp": {
    "apikey": "§{rand:h:32}-us14",
    "list": "{rand:h:10}"
  }
}
""",
    ),
    (
        "sendgrid",
        "nested",
        "appsettings.Production.json",
        """\
{
  "Logging": { "LogLevel": { "Default": "Warning" } },
  "SendGrid": {
    "ApiKey": "§SG.{rand:Aa0_-:22}.{rand:Aa0_-:43}"
  },
  "Smarty": {
    "AuthId": "{uuid}",
    "AuthToken": "{rand:Aa0:20}"
  }
}
""",
    ),
    (
        "smartystreets",
        "nested",
        "appsettings.json",
        """\
{
  "Smarty": {
    "AuthId": "{uuid}",
    "AuthToken": "§{rand:Aa0:20}"
  }
}
""",
    ),
    (
        "db password",
        "connstr",
        "appsettings.json",
        """\
{
  "ConnectionStrings": {
    "Default": "§Server=tcp:sql-prod-01.database.windows.net,1433;Initial Catalog=Billing;User ID=billing_app;Password={punct:16};Encrypt=True;"
  }
}
""",
    ),
    (
        "cosmos db",
        "connstr",
        "local.settings.json",
        """\
{
  "IsEncrypted": false,
  "Values": {
    "AzureWebJobsStorage": "UseDevelopmentStorage=true",
    "CosmosDb": "§AccountEndpoint=https://orders-db.documents.azure.com:443/;AccountKey={rand:b64:86}==;"
  }
}
""",
    ),
    (
        "trello",
        "assign",
        "local.settings.json",
        """\
{
  "Values": {
    "FUNCTIONS_WORKER_RUNTIME": "python",
    "TRELLO_TOKEN": "§{rand:h:64}"
  }
}
""",
    ),
    (
        "recurly",
        "pair",
        "collections/billing.postman_collection.json",
        """\
{
  "request": {
    "method": "GET",
    "header": [
      {
        "key": "X-Recurly-Key",
        "value": "§{rand:h:32}",
        "type": "text"
      }
    ],
    "url": "https://v3.recurly.com/accounts"
  }
}
""",
    ),
    (
        "unnamed vendor",
        "pair",
        "env/production.postman_environment.json",
        """\
{
  "name": "production",
  "values": [
    { "key": "baseUrl", "value": "https://api.pocketlane.com", "enabled": true },
    { "key": "apiKey", "value": "§{rand:Aa0:40}", "enabled": true }
  ]
}
""",
    ),
    (
        "unnamed vendor",
        "pair",
        "postman/auth.json",
        """\
"auth": {
  "type": "bearer",
  "bearer": [
    {
      "key": "token",
      "value": "§{rand:Aa0:64}",
      "type": "string"
    }
  ]
}
""",
    ),
    (
        "lemlist",
        "pair",
        "debug/session.har",
        """\
{"log": {"entries": [{"request": {"method": "POST", "url": "https://api.lemlist.com/api/campaigns",
  "headers": [
    {"name": "Content-Type", "value": "application/json"},
    {"name": "X-Api-Key", "value": "§{rand:h:32}"}
  ]}}]}}
""",
    ),
    (
        "private key",
        "private-key",
        "credentials/sa.json",
        """\
{
  "type": "service_account",
  "project_id": "ledger-prod-311812",
  "private_key_id": "{rand:h:40}",
  "private_key": "§{pem1:PRIVATE KEY}\\n",
  "client_email": "deployer@ledger-prod-311812.iam.gserviceaccount.com"
}
""",
    ),
    (
        "registry password",
        "encoded",
        ".docker/config.json",
        """\
{
  "auths": {
    "registry.gitlab.example.com": {
      "auth": "§{b64:deploy:{human}}"
    }
  }
}
""",
    ),
    (
        "private packagist",
        "nested",
        "auth.json",
        """\
{
  "http-basic": {
    "repo.packagist.com": {
      "username": "token",
      "password": "§{rand:h:40}"
    }
  }
}
""",
    ),
    (
        "polygon",
        "escaped",
        "analysis/explore.ipynb",
        """\
{
 "cells": [
  {
   "cell_type": "code",
   "source": [
    "import requests\\n",
    "API_KEY = \\"§{rand:h:32}\\"\\n",
    "r = requests.get(f\\"https://api.polygon.io/v2/aggs?apiKey={API_KEY}\\")"
   ]
  }
 ]
}
""",
    ),
    (
        "openweathermap",
        "escaped",
        "notebooks/weather.ipynb",
        """\
   "source": [
    "owm = pyowm.OWM('§{rand:h:32}')\\n",
    "mgr = owm.weather_manager()"
   ]
""",
    ),
    (
        "surge",
        "assign",
        "package.json",
        """\
{
  "name": "landing",
  "scripts": {
    "deploy": "SURGE_TOKEN=§{rand:h:32} surge ./dist landing.surge.sh",
    "build": "vite build"
  }
}
""",
    ),
    (
        "mapbox",
        "nested",
        "src/environments/environment.prod.json",
        """\
{
  "production": true,
  "stripePublishable": "pk_live_{rand:Aa0:24}",
  "mapbox": { "token": "§sk.{b64u:{"u":"skyline","a":"{rand:a0:25}"}}.{rand:Aa0_-:22}" }
}
""",
    ),
    (
        "db password",
        "nested",
        ".vscode/settings.json",
        """\
{
  "sqltools.connections": [
    {
      "driver": "PostgreSQL",
      "server": "analytics.internal",
      "username": "analyst",
      "password": "§{human}"
    }
  ]
}
""",
    ),
    (
        "db password",
        "nested",
        ".dbeaver/credentials-config.json",
        """\
{"postgres-jdbc-18a1-4fb0": {"#connection": {"user": "report", "password": "§{human}"}}}
""",
    ),
    (
        "generated password",
        "nested",
        "terraform.tfstate",
        """\
{
  "resources": [
    {
      "type": "random_password",
      "instances": [
        {
          "attributes": {
            "id": "none",
            "result": "§{punct:24}"
          }
        }
      ]
    }
  ]
}
""",
    ),
    (
        "deepl",
        "nested",
        "extension/config.json",
        """\
{
  "deepl": {
    "authKey": "§{uuid}:fx"
  }
}
""",
    ),
    (
        "coinmarketcap",
        "uuid-secret",
        "config/prices.json",
        """\
{
  "provider": "coinmarketcap",
  "cmc_key": "§{uuid}",
  "convert": "EUR"
}
""",
    ),
    (
        "pinecone",
        "uuid-secret",
        "config.json",
        """\
{
  "vector_store": {
    "pinecone_api_key": "§{uuid}",
    "environment": "us-west1-gcp"
  }
}
""",
    ),
    (
        "registry password",
        "encoded",
        "lerna.json",
        """\
{
  "command": { "publish": { "registry": "https://npm.pkg.corp/" } },
  "npmAuth": "§{b64:ci-bot:{rand:Aa0:20}}"
}
""",
    ),
    # ---- INI, TOML, properties ---------------------------------------------------------
    (
        "zulip",
        "section",
        ".zuliprc",
        """\
[api]
email=deploy-bot@zulip.tidewater.dev
key=§{rand:Aa0:32}
site=https://zulip.tidewater.dev
""",
    ),
    (
        "aws",
        "section",
        ".s3cfg",
        """\
[default]
access_key = {rand:A0:20}
secret_key = §{rand:Aa0:40}
host_base = s3.amazonaws.com
""",
    ),
    (
        "backblaze",
        "section",
        "rclone.conf",
        """\
[backblaze]
type = b2
account = 00{rand:h:23}
key = §K00{rand:Aa0:28}
""",
    ),
    (
        "digitalocean spaces",
        "section",
        ".config/rclone/rclone.conf",
        """\
[spaces]
type = s3
provider = DigitalOcean
access_key_id = {rand:A0:20}
secret_access_key = §{rand:Aa0:43}
endpoint = ams3.digitaloceanspaces.com
""",
    ),
    (
        "db password",
        "section",
        ".my.cnf",
        """\
[client]
user=backup
password=§{human}
host=db-replica-2
""",
    ),
    (
        "db password",
        "section",
        "odbc.ini",
        """\
[Warehouse]
Driver=/opt/snowflake/lib/libSnowflake.so
Server=xy12345.snowflakecomputing.com
UID=ETL_USER
PWD=§{human}
""",
    ),
    (
        "registry password",
        "section",
        ".pypirc",
        """\
[distutils]
index-servers = internal

[internal]
repository = https://nexus.corp.example/repository/pypi-internal/
username = deployer
password = §{human}
""",
    ),
    (
        "smtp password",
        "section",
        ".gitconfig",
        """\
[sendemail]
    smtpserver = smtp.fastmail.com
    smtpuser = ilse@fastmail.com
    smtppass = §{rand:a0:16}
    smtpencryption = tls
""",
    ),
    (
        "vcs password",
        "section",
        ".hgrc",
        """\
[auth]
corp.prefix = https://hg.corp.example
corp.username = build
corp.password = §{human}
""",
    ),
    (
        "transifex",
        "section",
        ".transifexrc",
        """\
[https://www.transifex.com]
rest_hostname = https://rest.api.transifex.com
token = §1/{rand:h:40}
""",
    ),
    (
        "windows password",
        "section",
        "/etc/samba/.smbcredentials",
        """\
username=scanner
password=§{human}
domain=OFFICE
""",
    ),
    (
        "http basic password",
        "section",
        "supervisord.conf",
        """\
[inet_http_server]
port=*:9001
username=admin
password=§{human}
""",
    ),
    (
        "mailtrap",
        "section",
        "php.ini",
        """\
[mail function]
SMTP = smtp.mailtrap.io
smtp_port = 2525
auth_username = {rand:h:14}
auth_password = §{rand:h:14}
""",
    ),
    (
        "akamai",
        "section",
        ".edgerc",
        """\
[default]
client_secret = §{rand:b64:43}=
host = akab-{rand:a0:16}-{rand:a0:16}.luna.akamaiapis.net
access_token = akab-{rand:a0:16}-{rand:a0:16}
client_token = akab-{rand:a0:16}-{rand:a0:16}
""",
    ),
    (
        "wireguard",
        "section",
        "wg0.conf",
        """\
[Interface]
Address = 10.8.0.2/24
PrivateKey = §{rand:b64:43}=
DNS = 1.1.1.1

[Peer]
PublicKey = {rand:b64:43}=
Endpoint = vpn.corp.example:51820
""",
    ),
    (
        "wifi psk",
        "human-password",
        "wpa_supplicant.conf",
        """\
network={
    ssid="Office-5G"
    psk="§{human}"
    key_mgmt=WPA-PSK
}
""",
    ),
    (
        "wifi psk",
        "section",
        "system-connections/Office.nmconnection",
        """\
[wifi]
ssid=Office
mode=infrastructure

[wifi-security]
key-mgmt=wpa-psk
psk=§{human}
""",
    ),
    (
        "registry token",
        "section",
        ".cargo/credentials.toml",
        """\
[registries.corp]
token = "§{rand:Aa0:32}"
""",
    ),
    (
        "db password",
        "section",
        ".streamlit/secrets.toml",
        """\
[connections.snowflake]
account = "xy12345"
user = "APP"
password = "§{human}"

[openweather]
key = "{rand:h:32}"
""",
    ),
    (
        "airtable",
        "section",
        ".streamlit/secrets.toml",
        """\
[airtable]
base = "app{rand:Aa0:14}"
api_key = "§key{rand:Aa0:14}"
""",
    ),
    (
        "pushover",
        "section",
        "config/prod.toml",
        """\
[pushover]
user = "{rand:a0:30}"
token = "§{rand:a0:30}"
""",
    ),
    (
        "imgur",
        "section",
        "settings.toml",
        """\
[default.imgur]
client_id = "{rand:h:15}"
client_secret = "§{rand:h:40}"
""",
    ),
    (
        "registry password",
        "section",
        "pyproject.toml",
        """\
[tool.poetry.http-basic.private]
username = "ci"
password = "§{rand:Aa0:24}"
""",
    ),
    (
        "db password",
        "assign",
        "src/main/resources/application.properties",
        """\
spring.datasource.url=jdbc:mysql://db:3306/crm
spring.datasource.username=crm
spring.datasource.password=§{human}
""",
    ),
    (
        "here",
        "assign",
        "src/main/resources/application.properties",
        """\
app.geocoder.provider=here
app.geocoder.here.api-key=§{rand:Aa0_-:43}
""",
    ),
    (
        "aws ses smtp",
        "assign",
        "config/application-prod.properties",
        """\
spring.mail.host=email-smtp.eu-west-1.amazonaws.com
spring.mail.username=AKIA{rand:A2:16}
spring.mail.password=§B{rand:b64:43}
""",
    ),
    (
        "confluent",
        "assign",
        "client.properties",
        """\
bootstrap.servers=pkc-l7pr2.eu-central-1.aws.confluent.cloud:9092
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{rand:A0:16}" §password="{rand:Aa0:64}";
""",
    ),
    (
        "sonarqube",
        "assign",
        "sonar-project.properties",
        """\
sonar.projectKey=payments-api
sonar.host.url=https://sonar.corp.example
sonar.login=§{rand:h:40}
""",
    ),
    (
        "artifactory",
        "assign",
        "gradle.properties",
        """\
org.gradle.jvmargs=-Xmx2g
artifactory_user=ci-publisher
artifactory_password=§{rand:Aa0:73}
""",
    ),
    (
        "signing key password",
        "assign",
        "gradle.properties",
        """\
signing.keyId={rand:H:8}
signing.password=§{human}
signing.secretKeyRingFile=/home/ci/.gnupg/secring.gpg
""",
    ),
    (
        "revenuecat",
        "assign",
        "local.properties",
        """\
sdk.dir=/Users/mchen/Library/Android/sdk
MAPS_API_KEY=AIza{rand:Aa0_-:35}
REVENUECAT_KEY=§goog_{rand:Aa0:27}
""",
    ),
    (
        "db password",
        "assign",
        "liquibase.properties",
        """\
url: jdbc:oracle:thin:@//ora-prod:1521/ORCL
username: APPOWNER
password: §{human}
""",
    ),
    (
        "db password",
        "assign",
        "hibernate.properties",
        """\
hibernate.connection.username=inventory
hibernate.connection.password=§{human}
""",
    ),
    # ---- Dockerfiles ---------------------------------------------------------------------
    (
        "algolia",
        "assign",
        "Dockerfile",
        """\
FROM node:20-alpine
WORKDIR /app
ENV ALGOLIA_APP_ID={rand:A0:10} \\
    ALGOLIA_API_KEY=§{rand:h:32}
COPY . .
""",
    ),
    (
        "gitlab",
        "assign",
        "Dockerfile",
        """\
FROM python:3.12-slim
ARG PIP_EXTRA_INDEX_URL=§https://__token__:{rand:Aa0_-:40}@gitlab.corp.example/api/v4/projects/42/packages/pypi/simple
RUN pip install -r requirements.txt
""",
    ),
    (
        "gitlab",
        "header",
        "docker/Dockerfile",
        """\
FROM alpine:3.19
RUN apk add --no-cache curl \\
 && curl -fsSL -H "PRIVATE-TOKEN: §{rand:Aa0_-:20}" \\
    https://gitlab.corp.example/api/v4/projects/7/packages/generic/cli/1.2.0/cli -o /usr/local/bin/cli
""",
    ),
    (
        "db password",
        "assign",
        "Dockerfile",
        """\
FROM mcr.microsoft.com/dotnet/aspnet:8.0
ENV ConnectionStrings__Default="Host=db;Database=app;Username=app;§Password={human}"
""",
    ),
    (
        "sidekiq pro",
        "assign",
        "Dockerfile.worker",
        """\
FROM ruby:3.3
ENV SIDEKIQ_PRO_CREDENTIALS=§{rand:h:8}:{rand:h:8}
RUN bundle config gems.contribsys.com $SIDEKIQ_PRO_CREDENTIALS
""",
    ),
    # ---- Terraform / HCL -------------------------------------------------------------------
    (
        "datadog",
        "assign",
        "main.tf",
        """\
provider "datadog" {
  api_key = "§{rand:h:32}"
  app_key = "{rand:h:40}"
}
""",
    ),
    (
        "datadog",
        "assign",
        "main.tf",
        """\
provider "datadog" {
  api_key = var.datadog_api_key
  app_key = "§{rand:h:40}"
}
""",
    ),
    (
        "linode",
        "assign",
        "providers.tf",
        """\
provider "linode" {
  token = "§{rand:h:64}"
}
""",
    ),
    (
        "cloudflare",
        "assign",
        "providers.tf",
        """\
provider "cloudflare" {
  api_token = "§{rand:Aa0_-:40}"
}
""",
    ),
    (
        "newrelic",
        "assign",
        "terraform.tfvars",
        """\
region          = "eu-west-1"
newrelic_api_key = "§NRAK-{rand:A0:27}"
pagerduty_token = "{rand:Aa0_-:20}"
""",
    ),
    (
        "pagerduty",
        "assign",
        "prod.auto.tfvars",
        """\
pagerduty_token = "§{rand:Aa0_-:20}"
""",
    ),
    (
        "db password",
        "human-password",
        "modules/rds/main.tf",
        """\
resource "aws_db_instance" "main" {
  engine            = "postgres"
  username          = "dbadmin"
  password          = "§{human}"
  instance_class    = "db.t3.medium"
}
""",
    ),
    (
        "heroku",
        "assign",
        "variables.tf",
        """\
variable "heroku_api_key" {
  type    = string
  default = "§{uuid}"
}
""",
    ),
    (
        "fastly",
        "assign",
        "variables.tf",
        """\
variable "fastly_key" {
  description = "Fastly API key"
  default     = "§{rand:Aa0_-:32}"
}
""",
    ),
    (
        "gitlab",
        "assign",
        "backend.tf",
        """\
terraform {
  backend "http" {
    address  = "https://gitlab.com/api/v4/projects/4711/terraform/state/prod"
    username = "deploy"
    password = "§glpat-{rand:Aa0_-:20}"
  }
}
""",
    ),
    (
        "grafana",
        "assign",
        "jobs/api.nomad.hcl",
        """\
      env {
        LOKI_URL      = "https://logs-prod-eu-west-0.grafana.net"
        LOKI_PASSWORD = "§glc_{rand:b64:80}="
      }
""",
    ),
    (
        "consul",
        "assign",
        "consul/config.hcl",
        """\
acl {
  enabled = true
  tokens {
    initial_management = "§{uuid}"
  }
}
""",
    ),
    # ---- XML ----------------------------------------------------------------------------------
    (
        "mailjet",
        "pair",
        "Web.config",
        """\
<configuration>
  <appSettings>
    <add key="Environment" value="Production" />
    <add key="MailjetApiSecret" value="§{rand:h:32}" />
  </appSettings>
</configuration>
""",
    ),
    (
        "db password",
        "connstr",
        "Web.config",
        """\
  <connectionStrings>
    <add name="DefaultConnection" connectionString="§Data Source=SQL01;Initial Catalog=Intranet;User Id=intranet;Password={human};" providerName="System.Data.SqlClient" />
  </connectionStrings>
""",
    ),
    (
        "registry password",
        "nested",
        ".m2/settings.xml",
        """\
<settings>
  <servers>
    <server>
      <id>nexus-releases</id>
      <username>deployment</username>
      <password>§{human}</password>
    </server>
  </servers>
</settings>
""",
    ),
    (
        "registry password",
        "pair",
        "NuGet.Config",
        """\
<configuration>
  <packageSourceCredentials>
    <corpfeed>
      <add key="Username" value="build" />
      <add key="ClearTextPassword" value="§{rand:a0:52}" />
    </corpfeed>
  </packageSourceCredentials>
</configuration>
""",
    ),
    (
        "http basic password",
        "assign",
        "conf/tomcat-users.xml",
        """\
<tomcat-users>
  <role rolename="manager-gui"/>
  <user username="deployer" §password="{human}" roles="manager-gui,manager-script"/>
</tomcat-users>
""",
    ),
    (
        "db password",
        "assign",
        "conf/context.xml",
        """\
<Context>
  <Resource name="jdbc/app" auth="Container" type="javax.sql.DataSource"
            username="app" §password="{human}"
            url="jdbc:postgresql://db:5432/app"/>
</Context>
""",
    ),
    (
        "db password",
        "pair",
        "src/main/resources/hibernate.cfg.xml",
        """\
<hibernate-configuration>
  <session-factory>
    <property name="hibernate.connection.username">hr</property>
    <property name="hibernate.connection.password">§{human}</property>
  </session-factory>
</hibernate-configuration>
""",
    ),
    (
        "sendgrid",
        "pair",
        "WEB-INF/applicationContext.xml",
        """\
<bean id="mailSender" class="org.springframework.mail.javamail.JavaMailSenderImpl">
  <property name="host" value="smtp.sendgrid.net"/>
  <property name="username" value="apikey"/>
  <property name="password" value="§{rand:Aa0_-:48}"/>
</bean>
""",
    ),
    (
        "jenkins",
        "nested",
        "jenkins/credentials.xml",
        """\
<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
  <scope>GLOBAL</scope>
  <id>artifactory</id>
  <username>jenkins</username>
  <password>§{rand:Aa0:24}</password>
</com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>
""",
    ),
    (
        "slack",
        "nested",
        "jobs/deploy/config.xml",
        """\
<hudson.plugins.slack.SlackNotifier plugin="slack@2.48">
  <baseUrl>https://hooks.slack.com/services/</baseUrl>
  <authToken>§{rand:Aa0:24}</authToken>
  <room>#deploys</room>
</hudson.plugins.slack.SlackNotifier>
""",
    ),
    (
        "ftp password",
        "encoded",
        "FileZilla/sitemanager.xml",
        """\
<Server>
  <Host>ftp.printshop-media.de</Host>
  <Port>21</Port>
  <User>upload</User>
  <Pass encoding="base64">§{b64:{human}}</Pass>
</Server>
""",
    ),
    (
        "ftp password",
        "nested",
        "FileZilla/recentservers.xml",
        """\
<RecentServers>
  <Server>
    <Host>files.kestrel.example</Host>
    <User>kestrel</User>
    <Pass>§{human}</Pass>
  </Server>
</RecentServers>
""",
    ),
    (
        "foursquare",
        "pair",
        "app/src/main/res/values/secrets.xml",
        """\
<resources>
    <string name="app_name">Tripnote</string>
    <string name="foursquare_client_secret">§{rand:A0:48}</string>
</resources>
""",
    ),
    (
        "branch",
        "pair",
        "Tripnote/Info.plist",
        """\
<dict>
    <key>CFBundleName</key>
    <string>Tripnote</string>
    <key>BranchKey</key>
    <string>§key_live_{rand:Aa0:32}</string>
    <key>AmplitudeApiKey</key>
    <string>{rand:h:32}</string>
</dict>
""",
    ),
    (
        "onesignal",
        "pair",
        "Config/Keys.plist",
        """\
<dict>
    <key>OneSignalRestKey</key>
    <string>§{rand:Aa0:48}</string>
</dict>
""",
    ),
    (
        "smtp password",
        "nested",
        "log4j2.xml",
        """\
<SMTP name="Mail" subject="Error" to="ops@fjordline.no" smtpHost="smtp.fjordline.no"
      smtpUsername="alerts" §smtpPassword="{human}" bufferSize="50"/>
""",
    ),
    (
        "ssh password",
        "section",
        "WinSCP.ini",
        """\
[Sessions\\deploy@web01]
HostName=web01.corp.example
UserName=deploy
Password=§{rand:A0:2}{rand:H:60}
""",
    ),
    # ---- CI systems and hosting manifests ---------------------------------------------------
    (
        "sauce labs",
        "uuid-secret",
        ".travis.yml",
        """\
language: node_js
env:
  global:
    - SAUCE_USERNAME=webteam
    - SAUCE_ACCESS_KEY=§{uuid}
""",
    ),
    (
        "browserstack",
        "assign",
        ".circleci/config.yml",
        """\
jobs:
  e2e:
    environment:
      BROWSERSTACK_USERNAME: qa_{rand:a0:6}
      BROWSERSTACK_ACCESS_KEY: §{rand:Aa0:20}
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "bitbucket-pipelines.yml",
        """\
pipelines:
  default:
    - step:
        script:
          - export DEPLOYHQ_API_KEY=§{rand:h:40}
          - ./deploy.sh
""",
    ),
    (
        "azure devops",
        "assign",
        "azure-pipelines.yml",
        """\
variables:
  buildConfiguration: Release
  nugetFeedPat: §{rand:a0:52}
""",
    ),
    (
        "unnamed vendor",
        "assign",
        ".drone.yml",
        """\
steps:
  - name: notify
    image: plugins/webhook
    settings:
      token: §{rand:Aa0:48}
""",
    ),
    (
        "heroku",
        "uuid-secret",
        "app.json",
        """\
{
  "name": "brisk-tundra",
  "env": {
    "HEROKU_API_KEY": { "value": "§{uuid}" }
  }
}
""",
    ),
    (
        "ssh password",
        "assign",
        "Vagrantfile",
        """\
Vagrant.configure("2") do |config|
  config.ssh.username = "vagrant"
  config.ssh.password = "§{human}"
end
""",
    ),
    (
        "unnamed vendor",
        "assign",
        ".envrc",
        """\
export AWS_PROFILE=dev
export PRICEFEED_TOKEN=§{rand:Aa0:40}
""",
    ),
    (
        "fly",
        "assign",
        "fly.toml",
        """\
app = "brisk-tundra"

[env]
  LOG_LEVEL = "info"
  UPSTASH_TOKEN = "§A{rand:Aa0:60}="
""",
    ),
    (
        "render",
        "assign",
        "render.yaml",
        """\
services:
  - type: web
    name: api
    envVars:
      - key: RESEND_API_KEY
        value: §re_{rand:Aa0:8}_{rand:Aa0:24}
""",
    ),
    # ---- credential files of well-known tools -------------------------------------------------
    (
        "db password",
        "file-format",
        ".pgpass",
        """\
localhost:5432:*:postgres:postgres
§db-prod.internal:5432:billing:billing_rw:{human}
""",
    ),
    (
        "heroku",
        "file-format",
        ".netrc",
        """\
machine api.heroku.com
  login ops@bellweather.io
  §password {uuid}
machine git.heroku.com
  login ops@bellweather.io
""",
    ),
    (
        "http basic password",
        "file-format",
        "_netrc",
        """\
§machine artifacts.corp.example login ci password {rand:Aa0:32}
""",
    ),
    (
        "bitbucket",
        "userinfo",
        ".git-credentials",
        """\
§https://mwest:{rand:Aa0:20}@bitbucket.org
""",
    ),
    (
        "registry password",
        "userinfo",
        "pip.conf",
        """\
[global]
§index-url = https://ci:{human}@pypi.corp.example/simple
""",
    ),
    (
        "npm",
        "uuid-secret",
        ".npmrc",
        """\
registry=https://registry.npmjs.org/
§//registry.npmjs.org/:_authToken={uuid}
""",
    ),
    (
        "registry password",
        "encoded",
        ".npmrc",
        """\
@corp:registry=https://nexus.corp.example/repository/npm/
//nexus.corp.example/repository/npm/:username=ci
§//nexus.corp.example/repository/npm/:_password={b64:{human}}
""",
    ),
    (
        "npm",
        "assign",
        ".yarnrc.yml",
        """\
npmScopes:
  corp:
    npmRegistryServer: "https://npm.corp.example"
    npmAuthToken: "§{rand:Aa0:36}"
""",
    ),
    (
        "rubygems",
        "assign",
        ".gem/credentials",
        """\
---
§:rubygems_api_key: {rand:h:32}
""",
    ),
    (
        "crypt hash",
        "file-format",
        ".htpasswd",
        """\
§admin:$apr1${rand:Aa0:8}${rand:Aa0:22}
""",
    ),
    (
        "crypt hash",
        "file-format",
        "nginx/htpasswd",
        """\
§monitor:$2y$10${rand:Aa0:53}
""",
    ),
    (
        "vpn psk",
        "file-format",
        "/etc/ipsec.secrets",
        """\
§: PSK "{punct:24}"
""",
    ),
    (
        "vpn psk",
        "file-format",
        "client.ovpn",
        """\
remote vpn.corp.example 1194
<tls-auth>
§-----BEGIN OpenVPN Static key V1-----
{rand:h:32}
{rand:h:32}
{rand:h:32}
-----END OpenVPN Static key V1-----
</tls-auth>
""",
    ),
    (
        "private key",
        "private-key",
        "deploy/id_ed25519",
        """\
§{pem:OPENSSH PRIVATE KEY}
""",
    ),
    (
        "aws",
        "section",
        ".aws/credentials",
        """\
[default]
aws_access_key_id = AKIA{rand:A2:16}
aws_secret_access_key = §{rand:Aa0:40}
""",
    ),
    (
        "gcs hmac",
        "section",
        ".boto",
        """\
[Credentials]
gs_access_key_id = GOOG{rand:A0:20}
gs_secret_access_key = §{rand:Aa0_:40}
""",
    ),
    (
        "stripe",
        "assign",
        "Pulumi.prod.yaml",
        """\
config:
  aws:region: eu-west-1
  app:sentryDsn: https://{rand:h:32}@o{rand:0:6}.ingest.sentry.io/{rand:0:7}
  app:stripeKey: §rk_live_{rand:Aa0:24}
""",
    ),
    (
        "clickup",
        "assign",
        "env.yml",
        """\
prod:
  CLICKUP_TOKEN: §pk_{rand:0:8}_{rand:A0:32}
  TWILIO_SID: AC{rand:h:32}
""",
    ),
)
