"""Blind corpus positives in text people type or paste: shell scripts and history,
command lines split over continuation lines, service units, web server config, logs,
READMEs, wiki notes and chat pastes, SQL dumps, connection strings, webhook and
signed URLs.

``(family, mechanism, path, text)``; ``§`` marks where the secret starts (see blind.py).
"""

from __future__ import annotations

TEXT: tuple[tuple[str, str, str, str], ...] = (
    # ---- shell scripts and history -------------------------------------------------------
    (
        "buildkite",
        "assign",
        "scripts/deploy.sh",
        """\
#!/usr/bin/env bash
set -euo pipefail
export BUILDKITE_AGENT_TOKEN=§{rand:a0:50}
buildkite-agent start
""",
    ),
    (
        "gandi",
        "assign",
        ".bashrc",
        """\
alias k=kubectl
export GANDI_KEY=§{rand:Aa0:24}
""",
    ),
    (
        "github",
        "assign",
        ".zshrc",
        """\
export HOMEBREW_GITHUB_API_TOKEN=§{rand:h:40}
""",
    ),
    (
        "db password",
        "cli-flag",
        ".bash_history",
        """\
cd /srv/app
mysql -u root -p§{human} shop < dump.sql
ls -la
""",
    ),
    (
        "ssh password",
        "cli-flag",
        ".bash_history",
        """\
sshpass -p '§{human}' ssh pi@192.168.1.40
""",
    ),
    (
        "redis",
        "cli-flag",
        ".zsh_history",
        """\
: 1712229041:0;redis-cli -h cache.internal -a §{rand:Aa0:32} info
""",
    ),
    (
        "registry password",
        "cli-flag",
        ".bash_history",
        """\
docker login registry.corp.example -u ci -p §{rand:Aa0:32}
""",
    ),
    (
        "db password",
        "cli-flag",
        ".bash_history",
        """\
mongo "mongodb://db1.internal:27017/admin" -u admin -p §{human} --authenticationDatabase admin
""",
    ),
    (
        "db password",
        "assign",
        ".bash_history",
        """\
PGPASSWORD=§{human} psql -h db.internal -U report analytics
""",
    ),
    (
        "gitlab",
        "userinfo",
        ".bash_history",
        """\
git clone https://oauth2:§{rand:Aa0_-:20}@gitlab.corp.example/platform/infra.git
""",
    ),
    (
        "http basic password",
        "cli-flag",
        ".bash_history",
        """\
htpasswd -b -c /etc/nginx/.htpasswd admin §{human}
""",
    ),
    (
        "db password",
        "cli-flag",
        ".bash_history",
        """\
mysqldump -uroot -p'§{human}' --all-databases > /backup/all.sql
""",
    ),
    (
        "archive password",
        "cli-flag",
        ".bash_history",
        """\
zip -P §{human} payroll-2024.zip payroll-2024.xlsx
""",
    ),
    (
        "archive password",
        "cli-flag",
        ".bash_history",
        """\
openssl enc -aes-256-cbc -salt -in backup.tar -out backup.tar.enc -k §{human}
""",
    ),
    (
        "stripe",
        "cli-flag",
        ".bash_history",
        """\
kubectl create secret generic stripe --from-literal=api-key=§rk_live_{rand:Aa0:24}
""",
    ),
    (
        "mailersend",
        "cli-flag",
        ".bash_history",
        """\
heroku config:set MAILERSEND_API_KEY=§mlsn.{rand:h:64} -a brisk-tundra
""",
    ),
    (
        "stripe",
        "cli-flag",
        ".bash_history",
        """\
vault kv put secret/billing stripe_key=§sk_live_{rand:Aa0:24}
""",
    ),
    (
        "aws",
        "cli-flag",
        ".bash_history",
        """\
aws configure set aws_secret_access_key §{rand:Aa0:40}
""",
    ),
    (
        "azure",
        "cli-flag",
        ".bash_history",
        """\
az login --service-principal -u {uuid} -p §{rand:Aa0_-:34}~ --tenant {uuid}
""",
    ),
    (
        "backblaze",
        "cli-flag",
        ".bash_history",
        """\
b2 authorize-account 00{rand:h:23} §K00{rand:Aa0:28}
""",
    ),
    (
        "http basic password",
        "cli-flag",
        ".bash_history",
        """\
wget --user=deploy --password=§{human} https://artifacts.corp.example/app.tar.gz
""",
    ),
    (
        "gitlab",
        "cli-flag",
        ".bash_history",
        """\
gitlab-runner register --url https://gitlab.com/ --registration-token §GR1348941{rand:Aa0_-:20}
""",
    ),
    (
        "windows password",
        "cli-flag",
        ".bash_history",
        """\
psexec \\\\web02 -u CORP\\admin -p §{human} cmd
""",
    ),
    (
        "ngrok",
        "cli-flag",
        ".bash_history",
        """\
ngrok config add-authtoken §{rand:Aa0:27}_{rand:Aa0:21}
""",
    ),
    (
        "pypi",
        "cli-flag",
        "bin/release.sh",
        """\
#!/bin/sh
twine upload -u __token__ -p §pypi-AgEIcHlwaS5vcmc{rand:Aa0_-:150} dist/*
""",
    ),
    (
        "archive password",
        "assign",
        "scripts/backup.sh",
        """\
#!/bin/bash
RESTIC_PASSWORD='§{human}'
export RESTIC_PASSWORD
restic -r s3:s3.amazonaws.com/corp-backups backup /srv
""",
    ),
    (
        "pushover",
        "assign",
        "scripts/notify.sh",
        """\
#!/bin/bash
PUSHOVER_APP=§{rand:a0:30}
PUSHOVER_USER={rand:a0:30}
curl -s --form-string "token=$PUSHOVER_APP" --form-string "user=$PUSHOVER_USER" https://api.pushover.net/1/messages.json
""",
    ),
    (
        "service password",
        "positional",
        "scripts/rsync-backup.sh",
        """\
export RSYNC_PASSWORD=§{human}
rsync -av /srv/data backup@nas::data
""",
    ),
    # ---- curl / CLI lines, with continuation lines -----------------------------------------
    (
        "mailersend",
        "header",
        "docs/api.sh",
        """\
curl -X POST https://api.mailersend.com/v1/email \\
  -H "Content-Type: application/json" \\
  -H "Authorization: Bearer §mlsn.{rand:h:64}" \\
  -d @message.json
""",
    ),
    (
        "cloudflare",
        "header",
        "scripts/purge.sh",
        """\
curl -X POST "https://api.cloudflare.com/client/v4/zones/{rand:h:32}/purge_cache" \\
     -H "X-Auth-Email: ops@lumenpay.io" \\
     -H "X-Auth-Key: §{rand:h:37}" \\
     --data '{"purge_everything":true}'
""",
    ),
    (
        "honeycomb",
        "header",
        "README.md",
        """\
```
curl https://api.honeycomb.io/1/events/prod \\
  -X POST \\
  -H "X-Honeycomb-Team: §{rand:Aa0:22}" \\
  -d '{"method":"GET","endpoint":"/foo"}'
```
""",
    ),
    (
        "circleci",
        "header",
        "ops/runbook.md",
        """\
    curl -H 'circle-token: §{rand:h:40}' https://circleci.com/api/v2/me
""",
    ),
    (
        "netlify",
        "header",
        "notes.txt",
        """\
curl -s -H "Authorization: Bearer §{rand:Aa0:64}" https://api.netlify.com/api/v1/sites
""",
    ),
    (
        "sentry",
        "header",
        "scripts/sentry-release.sh",
        """\
curl https://sentry.io/api/0/organizations/harbor/releases/ \\
  -H 'Authorization: Bearer §{rand:h:64}' \\
  -H 'Content-Type: application/json'
""",
    ),
    (
        "elastic",
        "header",
        "tools/elastic.sh",
        """\
curl -XGET "https://es.corp.example:9243/_cat/indices" -H "Authorization: ApiKey §{b64:{rand:Aa0_-:20}:{rand:Aa0_-:22}}"
""",
    ),
    (
        "grafana",
        "header",
        "scripts/grafana.sh",
        """\
curl -H "Authorization: Bearer §{b64:{"k":"{rand:Aa0:32}","n":"ci","id":1}}" https://grafana.corp/api/dashboards/db
""",
    ),
    (
        "pagerduty",
        "header",
        "docs/ops.md",
        """\
curl -X POST https://events.pagerduty.com/v2/enqueue \\
  -H 'Content-Type: application/json' \\
  -d '{"routing_key": "§{rand:h:32}", "event_action": "trigger"}'
""",
    ),
    (
        "healthchecks",
        "header",
        "scripts/backup-notify.sh",
        """\
curl -fsS -m 10 --retry 5 -o /dev/null \\
  -H "X-Api-Key: §{rand:Aa0_-:32}" https://healthchecks.io/api/v1/checks/
""",
    ),
    (
        "zendesk",
        "userinfo",
        "scripts/zendesk.sh",
        """\
curl https://brightdesk.zendesk.com/api/v2/tickets.json \\
  -u support@brightdesk.com/token:§{rand:Aa0:40}
""",
    ),
    (
        "toggl",
        "userinfo",
        "scripts/toggl.sh",
        """\
§curl -u {rand:h:32}:{lit:api_token} https://api.track.toggl.com/api/v9/me
""",
    ),
    (
        "mailgun",
        "userinfo",
        "scripts/mailgun.sh",
        """\
curl -s --user 'api:§{rand:h:32}-{rand:h:8}-{rand:h:8}' \\
    https://api.eu.mailgun.net/v3/mg.fernbrook.app/messages \\
    -F from='Fernbrook <noreply@fernbrook.app>'
""",
    ),
    (
        "http basic password",
        "userinfo",
        "docs/deploy.md",
        """\
curl --user admin:§{human} -T build.war "http://tomcat01:8080/manager/text/deploy?path=/app&update=true"
""",
    ),
    (
        "stripe",
        "userinfo",
        "scripts/stripe.sh",
        """\
curl https://api.stripe.com/v1/charges \\
  -u §sk_live_{rand:Aa0:24}: \\
  -d amount=2000
""",
    ),
    (
        "statuscake",
        "query",
        "crontab",
        """\
*/5 * * * * curl -fsS "https://api.statuscake.com/v1/uptime?api_key=§{rand:Aa0:20}" > /dev/null
""",
    ),
    (
        "openweathermap",
        "query",
        "scripts/fetch-weather.sh",
        """\
curl "https://api.openweathermap.org/data/2.5/weather?q=Oslo&units=metric&appid=§{rand:h:32}"
""",
    ),
    (
        "trello",
        "query",
        "scripts/trello-backup.sh",
        """\
curl "https://api.trello.com/1/members/me/boards?key={rand:h:32}&token=§{rand:h:64}"
""",
    ),
    (
        "trello",
        "query",
        "scripts/trello.sh",
        """\
curl "https://api.trello.com/1/boards/{rand:Aa0:8}/cards?key=§{rand:h:32}&token={rand:h:64}"
""",
    ),
    (
        "here",
        "query",
        "docs/geocode.md",
        """\
GET https://geocode.search.hereapi.com/v1/geocode?q=Invalidenstr+117+Berlin&apiKey=§{rand:Aa0_-:43}
""",
    ),
    (
        "matomo",
        "query",
        "scripts/matomo-report.sh",
        """\
curl "https://stats.harbor.io/index.php?module=API&method=VisitsSummary.get&idSite=1&period=day&date=today&format=JSON&token_auth=§{rand:h:32}"
""",
    ),
    (
        "hubspot",
        "query",
        "scripts/hubspot-export.sh",
        """\
curl "https://api.hubapi.com/contacts/v1/lists/all/contacts/all?hapikey=§{uuid}&count=100"
""",
    ),
    (
        "google analytics",
        "query",
        "scripts/ga4.py",
        """\
URL = "https://www.google-analytics.com/mp/collect?measurement_id=G-{rand:A0:10}&api_secret=§{rand:Aa0_-:22}"
""",
    ),
    (
        "etherscan",
        "query",
        "scripts/etherscan.sh",
        """\
curl "https://api.etherscan.io/api?module=account&action=balance&address=0x{rand:h:40}&tag=latest&apikey=§{rand:A0:34}"
""",
    ),
    (
        "ipinfo",
        "query",
        "scripts/ipinfo.sh",
        """\
curl "https://ipinfo.io/8.8.8.8/json?token=§{rand:h:14}"
""",
    ),
    (
        "ipstack",
        "query",
        "src/geo.js",
        """\
const url = `http://api.ipstack.com/${ip}?access_key=§{rand:h:32}`;
""",
    ),
    (
        "tomtom",
        "query",
        "widgets/tomtom.html",
        """\
<script src="https://api.tomtom.com/maps-sdk-for-web/cdn/6.x/6.25.0/maps/maps-web.min.js"></script>
<img src="https://api.tomtom.com/map/1/staticimage?key=§{rand:Aa0:32}&zoom=9&center=13.567,41.896">
""",
    ),
    (
        "google maps",
        "query",
        "index.html",
        """\
<script src="https://maps.googleapis.com/maps/api/js?key=§AIza{rand:Aa0_-:35}&callback=initMap" async></script>
""",
    ),
    (
        "pipedrive",
        "query",
        "scripts/pipedrive.sh",
        """\
curl "https://companydomain.pipedrive.com/api/v1/deals?api_token=§{rand:h:40}"
""",
    ),
    (
        "infura",
        "path-token",
        "hardhat.config.js",
        """\
networks: {
  mainnet: { url: "https://mainnet.infura.io/v3/§{rand:h:32}", accounts: [process.env.PK] },
}
""",
    ),
    (
        "alchemy",
        "path-token",
        "src/chain.ts",
        """\
const provider = new ethers.JsonRpcProvider("https://eth-mainnet.g.alchemy.com/v2/§{rand:Aa0_-:32}");
""",
    ),
    (
        "loggly",
        "path-token",
        "scripts/loggly.sh",
        """\
curl -H "content-type:text/plain" -d "deploy finished" \\
  https://logs-01.loggly.com/inputs/§{uuid}/tag/http/
""",
    ),
    (
        "telegram",
        "path-token",
        "bot/send.sh",
        """\
curl -s "https://api.telegram.org/bot§{rand:0:10}:AA{rand:Aa0_-:33}/sendMessage" -d chat_id=-100{rand:0:10} -d text="$MSG"
""",
    ),
    (
        "victorops",
        "path-token",
        "scripts/victorops.sh",
        """\
curl -X POST https://alert.victorops.com/integrations/generic/20131114/alert/§{uuid}/prod-routing -d @alert.json
""",
    ),
    # ---- webhook and signed URLs ---------------------------------------------------------------
    (
        "slack webhook",
        "webhook",
        "scripts/notify.py",
        """\
WEBHOOK = "§https://hooks.slack.com/services/T{rand:A0:8}/B{rand:A0:10}/{rand:Aa0:24}"
""",
    ),
    (
        "discord webhook",
        "webhook",
        "ci/notify.sh",
        """\
curl -H "Content-Type: application/json" -d '{"content":"build ok"}' \\
  §https://discord.com/api/webhooks/{rand:0:18}/{rand:Aa0_-:68}
""",
    ),
    (
        "teams webhook",
        "webhook",
        "monitoring/teams.yaml",
        """\
teams:
  url: §https://contoso.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{rand:h:32}/{uuid}/V2{rand:Aa0_-:40}
""",
    ),
    (
        "power automate webhook",
        "webhook",
        "alerts/flow.json",
        """\
{"url": "§https://prod-27.westeurope.logic.azure.com:443/workflows/{rand:h:32}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={rand:Aa0_-:43}"}
""",
    ),
    (
        "google chat webhook",
        "webhook",
        "ops/chat.sh",
        """\
URL='§https://chat.googleapis.com/v1/spaces/AAAA{rand:Aa0_-:7}/messages?key=AIza{rand:Aa0_-:35}&token={rand:Aa0_-:43}%3D'
""",
    ),
    (
        "mattermost webhook",
        "webhook",
        "config/notify.toml",
        """\
[mattermost]
url = "§https://chat.corp.example/hooks/{rand:a0:26}"
""",
    ),
    (
        "zapier webhook",
        "webhook",
        "src/forms.js",
        """\
await fetch('§https://hooks.zapier.com/hooks/catch/{rand:0:7}/{rand:a0:7}/', { method: 'POST', body })
""",
    ),
    (
        "ifttt webhook",
        "webhook",
        "home/automation.py",
        """\
requests.post("§https://maker.ifttt.com/trigger/door_open/with/key/{rand:Aa0_-:22}")
""",
    ),
    (
        "s3 presigned url",
        "signed-url",
        "support/ticket-4812.txt",
        """\
Here is the export you asked for (valid 7 days):
§https://corp-exports.s3.eu-west-1.amazonaws.com/exports/2024-03.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIA{rand:A2:16}%2F20240311%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20240311T101522Z&X-Amz-Expires=604800&X-Amz-Security-Token=IQoJb3JpZ2luX2Vj{rand:Aa0:200}&X-Amz-SignedHeaders=host&X-Amz-Signature={rand:h:64}
""",
    ),
    (
        "azure sas url",
        "signed-url",
        "scripts/upload.ps1",
        """\
$sas = "§https://stbackups01.blob.core.windows.net/db?sv=2022-11-02&ss=b&srt=co&sp=rwdlacx&se=2026-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https&sig={rand:Aa0:43}%3D"
azcopy copy ./dump.bak $sas
""",
    ),
    (
        "gcs signed url",
        "signed-url",
        "notes/share.md",
        """\
Download: §https://storage.googleapis.com/ml-datasets/train.tar?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential={rand:a:8}%40ml-prod.iam.gserviceaccount.com%2F20240301%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20240301T000000Z&X-Goog-Expires=604800&X-Goog-SignedHeaders=host&X-Goog-Signature={rand:h:512}
""",
    ),
    # ---- service units, web server config -----------------------------------------------------
    (
        "uptimerobot",
        "assign",
        "/etc/systemd/system/exporter.service",
        """\
[Service]
ExecStart=/usr/local/bin/exporter
Environment=UPTIMEROBOT_KEY=§ur{rand:0:7}-{rand:h:24}
Restart=always
""",
    ),
    (
        "cloudflare",
        "cli-flag",
        "/etc/systemd/system/cloudflared.service",
        """\
[Service]
ExecStart=/usr/bin/cloudflared tunnel run --token §{b64:{"a":"{rand:h:32}","t":"{uuid}","s":"{rand:Aa0:44}"}}
""",
    ),
    (
        "geoapify",
        "header",
        "nginx/conf.d/api.conf",
        """\
location /geo/ {
    proxy_pass https://api.geoapify.com/;
    proxy_set_header X-Api-Key §{rand:h:32};
}
""",
    ),
    (
        "easypost",
        "assign",
        ".htaccess",
        """\
SetEnv EASYPOST_API_KEY §EZAK{rand:h:54}
""",
    ),
    (
        "db password",
        "cli-flag",
        "crontab.txt",
        """\
0 3 * * * /usr/bin/pg_dump "host=db user=backup §password={human} dbname=app" | gzip > /backup/app.gz
""",
    ),
    # ---- logs ----------------------------------------------------------------------------------
    (
        "unnamed vendor",
        "log",
        "logs/app.log",
        """\
2024-03-11 10:15:22,481 INFO  starting sync worker pid=4412
2024-03-11 10:15:22,502 DEBUG using key=§{rand:h:32} for weather provider
2024-03-11 10:15:23,117 INFO  fetched 48 forecasts
""",
    ),
    (
        "unnamed vendor",
        "log",
        "logs/worker.log",
        """\
[DEBUG] 2024-05-02T08:01:12Z request headers: {'User-Agent': 'python-requests/2.31', 'X-Api-Key': '§{rand:Aa0:40}'}
""",
    ),
    (
        "lemonsqueezy",
        "log",
        "debug.log",
        """\
> GET /v2/accounts HTTP/1.1
> Host: api.lemonsqueezy.com
> Authorization: Bearer §{jwt}
> Accept: */*
""",
    ),
    (
        "http basic password",
        "log",
        "var/log/deploy.log",
        """\
+ curl -s -u deploy:§{human} https://nexus.corp.example/service/rest/v1/status
""",
    ),
    (
        "unnamed vendor",
        "log",
        "logs/access.log",
        """\
10.0.4.17 - - [11/Mar/2024:10:15:22 +0000] "GET /api/v1/export?format=csv&api_key=§{rand:Aa0:32} HTTP/1.1" 200 5123 "-" "curl/8.4.0"
""",
    ),
    (
        "rabbitmq",
        "log",
        "logs/celery.log",
        """\
[2024-04-01 12:00:01,337: ERROR/MainProcess] consumer: Cannot connect to amqp://celery:§{human}@10.0.0.5:5672//: [Errno 111] Connection refused.
""",
    ),
    (
        "smartsheet",
        "log",
        "logs/startup.log",
        """\
INFO  Loaded config: {'provider': 'smartsheet', 'token': '§{rand:Aa0:37}', 'timeout': 30}
""",
    ),
    (
        "npm",
        "log",
        "build.log",
        """\
Step 7/12 : RUN npm config set //registry.npmjs.org/:_authToken §{uuid}
 ---> Running in 3fa4c1d0b2e9
""",
    ),
    (
        "unnamed vendor",
        "log",
        "ci/output.txt",
        """\
Configuring client with api token §{rand:h:64} (expires never)
""",
    ),
    (
        "freshbooks",
        "log",
        "error.log",
        """\
Traceback (most recent call last):
  File "sync.py", line 41, in <module>
    client = Freshbooks(client_secret="§{rand:h:64}")
""",
    ),
    # ---- docs, READMEs, wiki notes, chat pastes ----------------------------------------------
    (
        "mapbox",
        "prose",
        "README.md",
        """\
## Local development

1. Copy `.env.example` to `.env`
2. Use the shared staging key for Mapbox: `§pk.{b64u:{"u":"tripnote","a":"{rand:a0:25}"}}.{rand:Aa0_-:22}`
""",
    ),
    (
        "smartling",
        "prose",
        "docs/setup.md",
        """\
The Smartling user secret is §{rand:a0:31}{rand:a0:4}-{rand:a0:10}, user identifier {rand:a:30}.
""",
    ),
    (
        "lokalise",
        "prose",
        "CONTRIBUTING.md",
        """\
For the integration tests you need a Lokalise token. Use this one (read-only project):

    §{rand:h:40}
""",
    ),
    (
        "user password",
        "prose",
        "wiki/Accounts.md",
        """\
| Service    | Login                 | Password      |
|------------|-----------------------|---------------|
| Grafana    | admin                 | §{human} |
| Jenkins    | jenkins-admin         | {human} |
""",
    ),
    (
        "vpn psk",
        "prose",
        "wiki/Onboarding.md",
        """\
### VPN
Server: vpn.corp.example — username is your email, shared PSK: §{punct:20}
""",
    ),
    (
        "ssh password",
        "prose",
        "docs/servers.txt",
        """\
web01 (10.0.1.11)
  root / §{human}
  ssh port 2222
""",
    ),
    (
        "postmark",
        "prose",
        "notes/slack-export.txt",
        """\
[10:42] dana: can someone send me the postmark token for staging?
[10:43] raj: §{uuid} — don't commit it pls
""",
    ),
    (
        "plaid",
        "prose",
        "notes/standup.md",
        """\
- Plaid sandbox creds: client_id {rand:h:24}, secret §{rand:h:30}
""",
    ),
    (
        "sendbird",
        "line-above",
        "notes/keys.txt",
        """\
sendbird api token:
§{rand:h:40}
""",
    ),
    (
        "klaviyo",
        "line-above",
        "todo.md",
        """\
- [ ] rotate the Klaviyo private key (leaked in #general):
  §pk_{rand:h:34}
""",
    ),
    (
        "user password",
        "prose",
        "meeting-notes/2024-02-12.md",
        """\
Demo account for the client: demo@fjordline.no, password §{human}
""",
    ),
    (
        "zerobounce",
        "prose",
        "issue-4411.md",
        """\
Repro: run with `ZEROBOUNCE KEY §{rand:h:32}` set and call /validate.
""",
    ),
    (
        "raygun",
        "prose",
        "notes.md",
        """\
raygun api key - §{rand:Aa0:22}==
""",
    ),
    (
        "datadog",
        "glued",
        "handover.txt",
        """\
datadog: dd-apikey-§{rand:h:32}
""",
    ),
    (
        "mux",
        "prose",
        "notes/mux.txt",
        """\
mux token id {uuid}
mux token secret §{rand:b64:75}
""",
    ),
    (
        "aftership",
        "prose",
        "support/reply.eml",
        """\
Hi Tom,

your new API credentials for the Aftership sandbox:
API key: §asat_{rand:h:32}

Best, Support
""",
    ),
    (
        "clockify",
        "prose",
        "email.txt",
        """\
Your Clockify API key has been regenerated: §{rand:Aa0:48}
""",
    ),
    (
        "wordpress",
        "prose",
        "notes/wp.txt",
        """\
WP application password for the deploy user: §{wpapp}
""",
    ),
    # ---- SQL dumps -------------------------------------------------------------------------------
    (
        "campaign monitor",
        "assign",
        "db/seed.sql",
        """\
INSERT INTO `integrations` (`id`, `provider`, `api_key`, `created_at`) VALUES
(1, 'campaignmonitor', '§{rand:Aa0:64}==', '2023-09-14 10:11:12');
""",
    ),
    (
        "user password",
        "positional",
        "backup/app_2024-03-01.sql",
        """\
INSERT INTO `users` VALUES (1,'admin','admin@harrowgate.io','§{human}','2023-01-03 09:00:00');
""",
    ),
    (
        "db password",
        "assign",
        "migrations/002_create_app_user.sql",
        """\
CREATE USER 'app'@'%' IDENTIFIED BY '§{human}';
GRANT SELECT, INSERT, UPDATE ON shop.* TO 'app'@'%';
""",
    ),
    (
        "db password",
        "assign",
        "init.sql",
        """\
ALTER USER postgres WITH PASSWORD '§{human}';
""",
    ),
    (
        "sparkpost",
        "assign",
        "db/settings.sql",
        """\
UPDATE settings SET value = '§{rand:h:40}' WHERE name = 'sparkpost_key';
""",
    ),
    (
        "oauth client secret",
        "positional",
        "dump.sql",
        """\
COPY public.oauth_clients (id, name, client_id, client_secret) FROM stdin;
1	mobile	{uuid}	§{rand:Aa0:40}
\\.
""",
    ),
    (
        "db password",
        "assign",
        "procs/linked_server.sql",
        """\
EXEC sp_addlinkedsrvlogin @rmtsrvname = N'ERP01', @useself = N'False', @rmtuser = N'erp_read', §@rmtpassword = N'{human}';
""",
    ),
    # ---- connection strings and URIs -------------------------------------------------------------
    (
        "db password",
        "userinfo",
        "config/database.env",
        """\
DATABASE_URL=§postgres://billing:{punct:18}@db-prod.internal:5432/billing
""",
    ),
    (
        "db password",
        "userinfo",
        "settings/prod.ini",
        """\
[database]
§url = mysql+pymysql://wiki:{human}@10.0.2.20/wiki?charset=utf8mb4
""",
    ),
    (
        "redis",
        "userinfo",
        "docker/.env",
        """\
§REDIS_URL=rediss://default:{rand:Aa0:32}@eu1-sharp-marmot-38211.upstash.io:38211
""",
    ),
    (
        "rabbitmq",
        "userinfo",
        "config.yaml",
        """\
amqp:
  url: §amqps://{rand:a:8}:{rand:Aa0_-:32}@rat.rmq2.cloudamqp.com/{rand:a:8}
""",
    ),
    (
        "db password",
        "userinfo",
        "app/config.py",
        """\
SQLALCHEMY_DATABASE_URI = "§postgresql://app:P.{rand:a0:8}~!{rand:0:3}@localhost:5432/app"
""",
    ),
    (
        "db password",
        "userinfo",
        "deploy/values.yaml",
        """\
mongodb:
  uri: "§mongodb://root:{human}@mongo-0.mongo:27017,mongo-1.mongo:27017/?replicaSet=rs0"
""",
    ),
    (
        "ftp password",
        "userinfo",
        "scripts/sync.sh",
        """\
lftp -e "mirror -R ./dist /public_html; quit" §ftp://webmaster:{human}@ftp.example-host.de
""",
    ),
    (
        "elastic",
        "userinfo",
        "elasticsearch.yml",
        """\
output.elasticsearch:
  hosts: ["§https://elastic:{rand:Aa0:20}@es01.corp.example:9200"]
""",
    ),
    (
        "rabbitmq",
        "userinfo",
        "docker-compose.yml",
        """\
    environment:
      - SPRING_RABBITMQ_ADDRESSES=§amqp://svc:Winter{rand:0:4}#@rabbit:5672
""",
    ),
    (
        "smtp password",
        "userinfo",
        ".env",
        """\
§SMTP_URL=smtp://reports%40kestrel-legal.com:{human}@smtp.office365.com:587
""",
    ),
    (
        "shopify",
        "userinfo",
        "config/shopify.yml",
        """\
shop_url: §https://{rand:h:32}:{rand:h:32}@wildflower-tea.myshopify.com/admin
""",
    ),
    (
        "db password",
        "connstr",
        "conf/datasource.properties",
        """\
jdbc.url=§jdbc:sqlserver://sql01.corp.example:1433;databaseName=HR;user=hr_app;password={punct:14};encrypt=true
""",
    ),
    (
        "db password",
        "connstr",
        "src/main/resources/db.properties",
        """\
db.url=§jdbc:postgresql://pg01:5432/ledger?user=ledger&password={human}&ssl=true
""",
    ),
    (
        "db password",
        "connstr",
        "reports/config.txt",
        """\
§Driver={ODBC Driver 18 for SQL Server};Server=tcp:reports.database.windows.net;Database=reports;Uid=reader;Pwd={punct:16};
""",
    ),
    (
        "db password",
        "connstr",
        "App.config",
        """\
<add name="Erp" connectionString="§Provider=OraOLEDB.Oracle;Data Source=ERP;User Id=erp;Password={human};" />
""",
    ),
    (
        "db password",
        "connstr",
        "scripts/report.py",
        """\
conn = psycopg2.connect("host=pg01 dbname=sales user=analyst §password={human} sslmode=require")
""",
    ),
    (
        "azure storage",
        "connstr",
        "appsettings.Development.json",
        """\
{
  "Storage": "§DefaultEndpointsProtocol=https;AccountName=stmedia01;AccountKey={rand:b64:86}==;EndpointSuffix=core.windows.net"
}
""",
    ),
    (
        "azure storage",
        "cloud-key",
        "scripts/blob.py",
        """\
ACCOUNT = "stmedia01"
CONTAINER = "uploads"
ACCOUNT_KEY = "§{rand:b64:86}=="
""",
    ),
    (
        "azure service bus",
        "connstr",
        "local.settings.json",
        """\
"ServiceBus": "§Endpoint=sb://orders-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={rand:b64:43}="
""",
    ),
    (
        "redis",
        "connstr",
        "appsettings.json",
        """\
"Redis": "cache-prod.redis.cache.windows.net:6380,§password={rand:Aa0:43}=,ssl=True,abortConnect=False"
""",
    ),
    (
        "db password",
        "assign",
        "docker-compose.yml",
        """\
    environment:
      - NEO4J_AUTH=§neo4j/{human}
""",
    ),
    (
        "crypt hash",
        "file-format",
        "backup/etc/shadow",
        """\
root:*:19000:0:99999:7:::
§deploy:$6${rand:Aa0:16}${rand:Aa0:86}:19422:0:99999:7:::
""",
    ),
    (
        "private key",
        "private-key",
        "deploy/key.pem",
        """\
§{pem:RSA PRIVATE KEY}
""",
    ),
    (
        "private key",
        "private-key",
        ".github/workflows/ssh.yml",
        """\
      - name: key
        run: |
          cat > ~/.ssh/id_ed25519 <<'EOF'
          §{pem:OPENSSH PRIVATE KEY}
          EOF
""",
    ),
)
