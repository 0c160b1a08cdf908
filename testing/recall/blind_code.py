"""Blind corpus positives in source code: Python, JavaScript and TypeScript, Go, Java,
C#, Ruby, PHP, Kotlin, Swift, Rust, Objective-C, PowerShell.

``(family, mechanism, path, text)``; ``§`` marks where the secret starts (see blind.py).
"""

from __future__ import annotations

CODE: tuple[tuple[str, str, str, str], ...] = (
    # ---- Python ---------------------------------------------------------------------------
    (
        "twilio",
        "positional",
        "notify/sms.py",
        """\
from twilio.rest import Client

client = Client("AC{rand:h:32}", "§{rand:h:32}")
client.messages.create(to="+15558675309", from_="+15017122661", body="Your code is 4821")
""",
    ),
    (
        "algolia",
        "positional",
        "search/index.py",
        """\
from algoliasearch.search_client import SearchClient

client = SearchClient.create("{rand:A0:10}", "§{rand:h:32}")
index = client.init_index("products")
""",
    ),
    (
        "rollbar",
        "positional",
        "app/__init__.py",
        """\
import rollbar

rollbar.init("§{rand:h:32}", "production")
""",
    ),
    (
        "cohere",
        "positional",
        "rag/embed.py",
        """\
import cohere

co = cohere.Client("§{rand:Aa0:40}")
response = co.embed(texts=docs, model="embed-english-v3.0")
""",
    ),
    (
        "segment",
        "assign",
        "analytics.py",
        """\
import analytics

analytics.write_key = "§{rand:Aa0:32}"
""",
    ),
    (
        "assemblyai",
        "assign",
        "transcribe.py",
        """\
import assemblyai as aai

aai.settings.api_key = "§{rand:h:32}"
transcriber = aai.Transcriber()
""",
    ),
    (
        "pinecone",
        "uuid-secret",
        "ingest.py",
        """\
import pinecone

pinecone.init(api_key="§{uuid}", environment="us-east1-gcp")
""",
    ),
    (
        "binance",
        "positional",
        "trader/main.py",
        """\
from binance.client import Client

client = Client("{rand:Aa0:64}", "§{rand:Aa0:64}")
""",
    ),
    (
        "kraken",
        "nested",
        "bot/exchange.py",
        """\
import ccxt

exchange = ccxt.kraken({
    "apiKey": "{rand:b64:56}",
    "secret": "§{rand:b64:86}==",
})
""",
    ),
    (
        "pusher",
        "positional",
        "realtime.py",
        """\
pusher_client = pusher.Pusher(
    app_id="1523981",
    key="{rand:h:20}",
    secret="§{rand:h:20}",
    cluster="eu",
)
""",
    ),
    (
        "mailjet",
        "positional",
        "mailer.py",
        """\
from mailjet_rest import Client

mailjet = Client(auth=("{rand:h:32}", "§{rand:h:32}"), version="v3.1")
""",
    ),
    (
        "atlassian",
        "positional",
        "jira_sync.py",
        """\
import requests

resp = requests.get(
    "https://ridgeway.atlassian.net/rest/api/3/search",
    auth=("m.osei@ridgeway.io", "§{rand:Aa0:24}"),
)
""",
    ),
    (
        "rapidapi",
        "header",
        "clients/weather.py",
        """\
HEADERS = {
    "Accept": "application/json",
    "X-RapidAPI-Key": "§{rand:a0:50}",
    "X-RapidAPI-Host": "weatherapi-com.p.rapidapi.com",
}
""",
    ),
    (
        "unnamed vendor",
        "header",
        "scripts/pull_orders.py",
        """\
r = requests.post(url, headers={"Authorization": "Token §{rand:h:40}"}, json=payload)
""",
    ),
    (
        "opsgenie",
        "header",
        "integrations/opsgenie.py",
        """\
headers = {"Authorization": "GenieKey §{uuid}"}
""",
    ),
    (
        "splunk",
        "header",
        "integrations/splunk.py",
        """\
session.headers.update({"Authorization": "Splunk §{uuid}"})
""",
    ),
    (
        "deepl",
        "header",
        "deepl_client.py",
        """\
headers = {"Authorization": "DeepL-Auth-Key §{uuid}:fx"}
""",
    ),
    (
        "okta",
        "header",
        "admin/okta_users.py",
        """\
OKTA_HEADERS = {"Authorization": "SSWS §00{rand:Aa0_-:40}", "Accept": "application/json"}
""",
    ),
    (
        "azure cognitive",
        "header",
        "ocr/azure.py",
        """\
headers = {
    "Ocp-Apim-Subscription-Key": "§{rand:h:32}",
    "Content-Type": "application/octet-stream",
}
""",
    ),
    (
        "elevenlabs",
        "header",
        "tts.py",
        """\
resp = httpx.post(url, headers={"xi-api-key": "§{rand:h:32}"}, json={"text": text})
""",
    ),
    (
        "coinmarketcap",
        "header",
        "prices.py",
        """\
headers = {"Accepts": "application/json", "X-CMC_PRO_API_KEY": "§{uuid}"}
""",
    ),
    (
        "postmark",
        "header",
        "mail/postmark.py",
        """\
headers = {"X-Postmark-Server-Token": "§{uuid}", "Accept": "application/json"}
""",
    ),
    (
        "db password",
        "positional",
        "etl/load.py",
        """\
conn = psycopg2.connect(
    host="warehouse.internal",
    dbname="analytics",
    user="etl",
    password="§{human}",
)
""",
    ),
    (
        "db password",
        "positional",
        "legacy/db.py",
        """\
db = pymysql.connect("10.0.3.12", "report", "§{human}", "sales")
""",
    ),
    (
        "ssh password",
        "positional",
        "tools/backup.py",
        """\
ssh = paramiko.SSHClient()
ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
ssh.connect("nas.home.lan", username="admin", password="§{human}")
""",
    ),
    (
        "ftp password",
        "positional",
        "upload_reports.py",
        """\
ftp = ftplib.FTP("ftp.printhouse.example", "reports", "§{human}")
""",
    ),
    (
        "smtp password",
        "positional",
        "alerts/mail.py",
        """\
server = smtplib.SMTP_SSL("smtp.gmail.com", 465)
server.login("alerts.bakery@gmail.com", "§{rand:a:16}")
""",
    ),
    (
        "redis",
        "positional",
        "cache.py",
        """\
r = redis.Redis(host="redis-14523.c12.eu-west-1.ec2.cloud.redislabs.com", port=14523, password="§{rand:Aa0:32}")
""",
    ),
    (
        "wasabi",
        "positional",
        "upload.py",
        """\
s3 = boto3.client(
    "s3",
    endpoint_url="https://s3.wasabisys.com",
    aws_access_key_id="{rand:A0:20}",
    aws_secret_access_key="§{rand:Aa0:40}",
)
""",
    ),
    (
        "app secret key",
        "punct-password",
        "mysite/settings.py",
        """\
# SECURITY WARNING: keep the secret key used in production secret!
SECRET_KEY = "§{django}"
DEBUG = False
""",
    ),
    (
        "db password",
        "human-password",
        "mysite/settings/production.py",
        """\
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "shop",
        "USER": "shop",
        "PASSWORD": "§{human}",
        "HOST": "db.internal",
    }
}
""",
    ),
    (
        "smtp password",
        "human-password",
        "settings.py",
        """\
EMAIL_HOST = "smtp.zoho.eu"
EMAIL_HOST_USER = "hello@pinewood.studio"
EMAIL_HOST_PASSWORD = "§{human}"
""",
    ),
    (
        "app secret key",
        "assign",
        "app.py",
        """\
app = Flask(__name__)
app.config["SECRET_KEY"] = "§{rand:h:48}"
""",
    ),
    (
        "smtp password",
        "assign",
        "config.py",
        """\
class ProductionConfig(Config):
    MAIL_PASSWORD = "§{human}"
    RECAPTCHA_PRIVATE_KEY = "6L{rand:Aa0_-:38}"
""",
    ),
    (
        "recaptcha",
        "assign",
        "config.py",
        """\
RECAPTCHA_PUBLIC_KEY = "6L{rand:Aa0_-:38}"
RECAPTCHA_PRIVATE_KEY = "§6L{rand:Aa0_-:38}"
""",
    ),
    (
        "scraperapi",
        "assign",
        "scraper/settings.py",
        """\
SCRAPERAPI_KEY = "§{rand:h:32}"
CONCURRENT_REQUESTS = 8
""",
    ),
    (
        "telegram",
        "assign",
        "bot.py",
        """\
TELEGRAM_TOKEN = "§{rand:0:10}:AA{rand:Aa0_-:33}"
""",
    ),
    (
        "newsapi",
        "assign",
        "news.py",
        """\
newsapi = NewsApiClient(api_key='§{rand:h:32}')
""",
    ),
    (
        "ipstack",
        "glued",
        "utils/geo.py",
        """\
ipstackKey = "§{rand:h:32}"
""",
    ),
    (
        "zoom",
        "glued",
        "clients.py",
        """\
zoomSecret = "§{rand:Aa0:36}"
""",
    ),
    (
        "clearbit",
        "nested",
        "config/services.py",
        """\
SERVICES = {
    "clearbit": {"key": "§sk_{rand:h:32}"},
    "hunter": {"key": "{rand:h:40}"},
}
""",
    ),
    (
        "hunter",
        "nested",
        "config/services.py",
        """\
SERVICES = {
    "hunter": {"key": "§{rand:h:40}"},
}
""",
    ),
    (
        "wolfram",
        "positional",
        "skills/math.py",
        """\
client = wolframalpha.Client("§{rand:A0:6}-{rand:A0:10}")
""",
    ),
    (
        "zoho",
        "compound",
        "crm/zoho.py",
        """\
REFRESH_TOKEN = "§1000.{rand:h:32}.{rand:h:32}"
CLIENT_ID = "1000.{rand:A0:30}"
""",
    ),
    (
        "asana",
        "compound",
        "sync_tasks.py",
        """\
client = asana.Client.access_token("§1/{rand:0:16}:{rand:h:32}")
""",
    ),
    (
        "intercom",
        "assign",
        "support/intercom.py",
        """\
INTERCOM_ACCESS_TOKEN = "§{b64:tok:{uuid}:aW50ZXJjb20=:1:0}"
""",
    ),
    (
        "azure openai",
        "positional",
        "llm.py",
        """\
client = AzureOpenAI(
    api_key="§{rand:h:32}",
    api_version="2024-02-01",
    azure_endpoint="https://contoso-eastus.openai.azure.com",
)
""",
    ),
    (
        "supabase",
        "positional",
        "db.py",
        """\
supabase = create_client("https://{rand:a:20}.supabase.co", "§{jwt}")
""",
    ),
    (
        "weaviate",
        "positional",
        "vectors.py",
        """\
client = weaviate.Client(
    url="https://my-sandbox-{rand:a0:8}.weaviate.network",
    auth_client_secret=weaviate.AuthApiKey(api_key="§{rand:Aa0:40}"),
)
""",
    ),
    (
        "db password",
        "userinfo",
        "dags/export.py",
        """\
engine = create_engine("mssql+pyodbc://etl:§{punct:14}@sqlprod01/DW?driver=ODBC+Driver+17+for+SQL+Server")
""",
    ),
    (
        "rabbitmq",
        "userinfo",
        "celeryconfig.py",
        """\
broker_url = "amqp://worker:§{human}@rabbit.internal:5672/prod"
""",
    ),
    (
        "freshbooks",
        "positional",
        "setup_creds.py",
        """\
keyring.set_password("freshbooks", "billing@harlow.co", "§{rand:Aa0:40}")
""",
    ),
    # ---- JavaScript / TypeScript ---------------------------------------------------------
    (
        "bugsnag",
        "nested",
        "src/index.js",
        """\
Bugsnag.start({
  apiKey: '§{rand:h:32}',
  plugins: [new BugsnagPluginReact()],
})
""",
    ),
    (
        "segment",
        "positional",
        "public/index.html",
        """\
<script>
  !function(){var analytics=window.analytics=window.analytics||[];analytics.load("§{rand:Aa0:32}");analytics.page()}();
</script>
""",
    ),
    (
        "db password",
        "nested",
        "db.js",
        """\
const pool = mysql.createPool({
  host: 'localhost',
  user: 'root',
  password: '§{human}',
  database: 'inventory'
});
""",
    ),
    (
        "db password",
        "positional",
        "models/index.js",
        """\
const sequelize = new Sequelize('tickets', 'tickets_app', '§{human}', {
  host: 'pg.internal',
  dialect: 'postgres',
});
""",
    ),
    (
        "mailgun",
        "nested",
        "mailer.js",
        """\
const transporter = nodemailer.createTransport({
  host: 'smtp.mailgun.org',
  port: 587,
  auth: { user: 'postmaster@mg.cardinal.dev', pass: '§{rand:h:32}-{rand:h:8}-{rand:h:8}' },
});
""",
    ),
    (
        "db password",
        "userinfo",
        "server/db.js",
        """\
mongoose.connect('mongodb+srv://appuser:§{human}@cluster0.{rand:a0:5}.mongodb.net/shop?retryWrites=true');
""",
    ),
    (
        "shipengine",
        "header",
        "src/api/shipping.ts",
        """\
const api = axios.create({
  baseURL: 'https://api.shipengine.com/v1',
  headers: { 'API-Key': '§TEST_{rand:Aa0_-:43}' },
});
""",
    ),
    (
        "hubspot",
        "header",
        "src/lib/hubspot.ts",
        """\
const res = await fetch(`https://api.hubapi.com/crm/v3/objects/contacts`, {
  headers: { Authorization: 'Bearer §pat-na1-{uuid}' },
});
""",
    ),
    (
        "bigcommerce",
        "header",
        "lib/cms.js",
        """\
export const client = { headers: { 'X-Auth-Token': '§{rand:a0:31}' } } // BigCommerce
""",
    ),
    (
        "typesense",
        "header",
        "utils/typesense.js",
        """\
const res = await fetch(url, { headers: { 'X-TYPESENSE-API-KEY': '§{rand:Aa0:32}' } })
""",
    ),
    (
        "fastly",
        "header",
        "src/services/fastly.js",
        """\
await fetch(`https://api.fastly.com/service/${sid}/purge_all`, {
  method: 'POST',
  headers: { 'Fastly-Key': '§{rand:Aa0_-:32}' },
})
""",
    ),
    (
        "private key",
        "nested",
        "src/firebase.ts",
        """\
export const adminCreds = {
  projectId: 'tally-prod',
  clientEmail: 'firebase-adminsdk-{rand:a0:5}@tally-prod.iam.gserviceaccount.com',
  privateKey: '§{pem1:PRIVATE KEY}',
};
""",
    ),
    (
        "maptiler",
        "assign",
        "src/config.js",
        """\
export const MAPTILER_KEY = '§{rand:Aa0:20}';
""",
    ),
    (
        "geoapify",
        "assign",
        "src/constants.ts",
        """\
export const GEOAPIFY_API_KEY = "§{rand:h:32}";
export const DEFAULT_ZOOM = 12;
""",
    ),
    (
        "giphy",
        "glued",
        "src/api.js",
        """\
const apiKey = "§{rand:Aa0:32}"; // giphy
""",
    ),
    (
        "unnamed vendor",
        "glued",
        "main.js",
        """\
const acmeToken = '§{rand:Aa0:40}';
""",
    ),
    (
        "yelp",
        "glued",
        "scripts/sync.js",
        """\
let yelpKEY = "§{rand:Aa0_-:128}";
""",
    ),
    (
        "algolia",
        "positional",
        "src/search.js",
        """\
const searchClient = algoliasearch('{rand:A0:10}', '§{rand:h:32}');
""",
    ),
    (
        "stream",
        "positional",
        "server/stream.js",
        """\
const serverClient = StreamChat.getInstance('{rand:a0:12}', '§{rand:a0:64}');
""",
    ),
    (
        "mollie",
        "positional",
        "server/payments.js",
        """\
const mollie = createMollieClient({ apiKey: '§live_{rand:Aa0:30}' });
""",
    ),
    (
        "telegram",
        "positional",
        "index.js",
        """\
const bot = new Telegraf('§{rand:0:10}:AA{rand:Aa0_-:33}');
""",
    ),
    (
        "discord",
        "positional",
        "discord/index.js",
        """\
client.login('§{rand:Aa0:24}.{rand:Aa0_-:6}.{rand:Aa0_-:38}');
""",
    ),
    (
        "jwt secret",
        "positional",
        "middleware/auth.js",
        """\
const token = jwt.sign({ id: user.id }, '§{rand:Aa0:40}', { expiresIn: '1h' });
""",
    ),
    (
        "jwt secret",
        "human-password",
        "src/auth/jwt.ts",
        """\
const decoded = jwt.verify(token, "§{human}");
""",
    ),
    (
        "app secret key",
        "assign",
        "app.js",
        """\
app.use(session({
  secret: '§{rand:Aa0:32}',
  resave: false,
}));
""",
    ),
    (
        "contentful",
        "nested",
        "next.config.js",
        """\
module.exports = {
  env: {
    CONTENTFUL_ACCESS_TOKEN: '§{rand:Aa0_-:43}',
    CONTENTFUL_SPACE_ID: '{rand:a0:12}',
  },
};
""",
    ),
    (
        "pusher",
        "nested",
        "src/plugins/pusher.ts",
        """\
export default new Echo({
  broadcaster: 'pusher',
  key: '{rand:h:20}',
  secret: '§{rand:h:20}',
  cluster: 'eu',
});
""",
    ),
    (
        "shipengine",
        "positional",
        "src/services/shippo.service.ts",
        """\
@Injectable()
export class ShippingService {
  private readonly client = new Shipengine('§{rand:Aa0_-:43}');
}
""",
    ),
    (
        "user password",
        "human-password",
        "cypress/e2e/login.cy.js",
        """\
cy.get('#email').type('qa.lead@brightwell.io')
cy.get('#password').type('§{human}')
cy.get('button[type=submit]').click()
""",
    ),
    # ---- Go ---------------------------------------------------------------------------------
    (
        "openweathermap",
        "assign",
        "internal/weather/client.go",
        """\
package weather

const owmKey = "§{rand:h:32}"
""",
    ),
    (
        "brevo",
        "nested",
        "cmd/api/main.go",
        """\
cfg := &sendinblue.Config{
	APIKey:  "§xkeysib-{rand:h:64}-{rand:Aa0:16}",
	BaseURL: "https://api.brevo.com/v3",
}
""",
    ),
    (
        "pagerduty",
        "nested",
        "cmd/worker/main.go",
        """\
client := pagerduty.NewClient(&pagerduty.Config{
	AuthToken: "§{rand:Aa0_-:20}",
})
""",
    ),
    (
        "unnamed vendor",
        "header",
        "pkg/notify/slack.go",
        """\
req.Header.Set("X-Api-Token", "§{rand:h:40}")
""",
    ),
    (
        "grafana",
        "header",
        "pkg/loki/push.go",
        """\
req.SetBasicAuth("{rand:0:6}", "§glc_{rand:Aa0:80}")
""",
    ),
    (
        "smtp password",
        "positional",
        "mail.go",
        """\
auth := smtp.PlainAuth("", "noreply@quillbooks.io", "§{human}", "smtp.office365.com")
""",
    ),
    (
        "minio",
        "positional",
        "store/minio.go",
        """\
minioClient, err := minio.New("s3.corp.example:9000", &minio.Options{
	Creds:  credentials.NewStaticV4("{rand:A0:20}", "§{rand:Aa0:40}", ""),
	Secure: true,
})
""",
    ),
    (
        "db password",
        "userinfo",
        "db/conn.go",
        """\
dsn := "orders:§{punct:16}@tcp(mysql.internal:3306)/orders?parseTime=true"
""",
    ),
    # ---- Java / Kotlin ------------------------------------------------------------------------
    (
        "db password",
        "positional",
        "src/main/java/com/acme/db/Dao.java",
        """\
Connection conn = DriverManager.getConnection(
    "jdbc:mysql://db.internal:3306/crm", "crm_app", "§{human}");
""",
    ),
    (
        "weatherstack",
        "assign",
        "src/main/java/com/acme/Config.java",
        """\
public final class Config {
    public static final String WEATHERSTACK_ACCESS_KEY = "§{rand:h:32}";
}
""",
    ),
    (
        "bing maps",
        "glued",
        "src/main/java/com/acme/maps/Geo.java",
        """\
private static final String bingMapsKey = "§{rand:Aa0_-:64}";
""",
    ),
    (
        "shopify",
        "header",
        "src/main/java/com/acme/http/Api.java",
        """\
HttpRequest request = HttpRequest.newBuilder(uri)
    .header("X-Shopify-Access-Token", "§shpat_{rand:h:32}")
    .build();
""",
    ),
    (
        "dhl",
        "header",
        "src/main/java/com/acme/dhl/Tracking.java",
        """\
connection.setRequestProperty("DHL-API-Key", "§{rand:Aa0:32}");
""",
    ),
    (
        "braintree",
        "positional",
        "src/main/java/com/acme/pay/Gateway.java",
        """\
BraintreeGateway gateway = new BraintreeGateway(
    Environment.PRODUCTION, "{rand:a0:16}", "{rand:a0:16}", "§{rand:h:32}");
""",
    ),
    (
        "smtp password",
        "positional",
        "src/main/java/com/acme/mail/Mailer.java",
        """\
Session session = Session.getInstance(props, new Authenticator() {
    protected PasswordAuthentication getPasswordAuthentication() {
        return new PasswordAuthentication("orders@birchgrove.com", "§{human}");
    }
});
""",
    ),
    (
        "foursquare",
        "assign",
        "app/src/main/java/com/tripnote/Keys.kt",
        """\
object Keys {
    const val FOURSQUARE_API_KEY = "§fsq3{rand:Aa0_-:44}="
}
""",
    ),
    (
        "revenuecat",
        "glued",
        "app/src/main/java/com/tripnote/net/Api.kt",
        """\
private val revenueCatKey = "§{rand:Aa0:32}"
""",
    ),
    (
        "onesignal",
        "assign",
        "app/build.gradle",
        """\
android {
    defaultConfig {
        buildConfigField "String", "ONESIGNAL_APP_ID", "\\"{uuid}\\""
        buildConfigField "String", "ONESIGNAL_REST_KEY", "§\\"{rand:Aa0:48}\\""
    }
}
""",
    ),
    (
        "registry password",
        "nested",
        "build.gradle.kts",
        """\
repositories {
    maven {
        url = uri("https://maven.pkg.corp.example/releases")
        credentials {
            username = "gradle"
            password = "§{rand:Aa0:40}"
        }
    }
}
""",
    ),
    # ---- C# ----------------------------------------------------------------------------------------
    (
        "windows password",
        "positional",
        "Services/FileShare.cs",
        """\
var credential = new NetworkCredential("svc_scanner", "§{human}", "CORP");
""",
    ),
    (
        "sendgrid",
        "positional",
        "Services/EmailSender.cs",
        """\
var client = new SmtpClient("smtp.sendgrid.net", 587)
{
    Credentials = new NetworkCredential("apikey", "§SG.{rand:Aa0_-:22}.{rand:Aa0_-:43}")
};
""",
    ),
    (
        "postmark",
        "assign",
        "Constants.cs",
        """\
public const string PostmarkServerToken = "§{uuid}";
""",
    ),
    (
        "mailchimp",
        "assign",
        "Startup.cs",
        """\
services.AddHttpClient("mailchimp", c => c.DefaultRequestHeaders.Add("Authorization", "apikey §{rand:h:32}-us21"));
""",
    ),
    (
        "db password",
        "connstr",
        "Data/AppDbContext.cs",
        """\
optionsBuilder.UseSqlServer("§Server=localhost;Database=Shop;User Id=sa;Password={punct:14};TrustServerCertificate=True");
""",
    ),
    (
        "db password",
        "connstr",
        "Program.cs",
        """\
var conn = new NpgsqlConnection("Host=pg;Username=app;§Password={human};Database=app");
""",
    ),
    # ---- Ruby ---------------------------------------------------------------------------------------
    (
        "stripe",
        "assign",
        "config/initializers/stripe.rb",
        """\
Rails.configuration.stripe = {
  publishable_key: 'pk_live_{rand:Aa0:24}',
  secret_key: '§sk_live_{rand:Aa0:24}'
}
""",
    ),
    (
        "lob",
        "assign",
        "config/initializers/lob.rb",
        """\
Lob.api_key = "§live_{rand:h:35}"
""",
    ),
    (
        "plivo",
        "positional",
        "lib/sms.rb",
        """\
client = Plivo::RestClient.new("MA{rand:A0:18}", "§{rand:Aa0:40}")
""",
    ),
    (
        "smtp password",
        "positional",
        "app/mailers/smtp.rb",
        """\
Net::SMTP.start('smtp.example.net', 587, 'bakery.example', 'orders', '§{human}', :plain)
""",
    ),
    (
        "postmark",
        "nested",
        "config/environments/production.rb",
        """\
config.action_mailer.smtp_settings = {
  address: 'smtp.postmarkapp.com',
  user_name: '{uuid}',
  password: '§{uuid}',
  authentication: :cram_md5
}
""",
    ),
    (
        "rollbar",
        "assign",
        "config/initializers/rollbar.rb",
        """\
Rollbar.configure do |config|
  config.access_token = '§{rand:h:32}'
end
""",
    ),
    # ---- PHP -------------------------------------------------------------------------------------------
    (
        "db password",
        "positional",
        "wp-config.php",
        """\
define( 'DB_NAME', 'wp_shop' );
define( 'DB_USER', 'wp_shop' );
define( 'DB_PASSWORD', '§{human}' );
define( 'DB_HOST', 'localhost' );
""",
    ),
    (
        "app secret key",
        "punct-password",
        "wp-config.php",
        """\
define('AUTH_KEY',         '§{salt}');
define('SECURE_AUTH_KEY',  '{salt}');
""",
    ),
    (
        "db password",
        "positional",
        "includes/db.php",
        """\
$pdo = new PDO('mysql:host=localhost;dbname=booking', 'booking', '§{human}');
""",
    ),
    (
        "db password",
        "positional",
        "connect.php",
        """\
$conn = mysqli_connect("localhost", "root", "§{human}", "guestbook");
""",
    ),
    (
        "mailgun",
        "assign",
        "config/services.php",
        """\
return [
    'mailgun' => [
        'domain' => 'mg.hollow.app',
        'secret' => '§{rand:h:32}-{rand:h:8}-{rand:h:8}',
    ],
];
""",
    ),
    (
        "app secret key",
        "assign",
        "application/config/config.php",
        """\
$config['encryption_key'] = '§{rand:h:32}';
""",
    ),
    (
        "smsapi",
        "glued",
        "inc/settings.php",
        """\
$smsapiToken = "§{rand:Aa0:40}";
""",
    ),
    (
        "unnamed vendor",
        "header",
        "api/sync.php",
        """\
curl_setopt($ch, CURLOPT_HTTPHEADER, array('Api-Token: §{rand:h:40}', 'Accept: application/json'));
""",
    ),
    (
        "http basic password",
        "userinfo",
        "cron/export.php",
        """\
curl_setopt($ch, CURLOPT_USERPWD, "exporter:§{human}");
""",
    ),
    # ---- Swift / Objective-C / Rust ----------------------------------------------------------------
    (
        "revenuecat",
        "positional",
        "Tripnote/AppDelegate.swift",
        """\
Purchases.configure(withAPIKey: "§appl_{rand:Aa0:27}")
""",
    ),
    (
        "openweathermap",
        "assign",
        "Tripnote/Secrets.swift",
        """\
enum Secrets {
    static let openWeatherKey = "§{rand:h:32}"
}
""",
    ),
    (
        "flurry",
        "positional",
        "Legacy/AppDelegate.m",
        """\
[Flurry startSession:@"§{rand:A0:20}"];
""",
    ),
    (
        "cohere",
        "positional",
        "src/main.rs",
        """\
let client = Client::new("§{rand:Aa0:40}");  // cohere
""",
    ),
    (
        "tomtom",
        "assign",
        "src/config.rs",
        """\
pub const TOMTOM_KEY: &str = "§{rand:Aa0:32}";
""",
    ),
    # ---- other languages and build files ---------------------------------------------------
    (
        "mailgun",
        "nested",
        "config/prod.exs",
        """\
config :shop, Shop.Mailer,
  adapter: Swoosh.Adapters.Mailgun,
  api_key: "§{rand:h:32}-{rand:h:8}-{rand:h:8}",
  domain: "mg.shop.example"
""",
    ),
    (
        "app secret key",
        "nested",
        "config/runtime.exs",
        """\
config :shop, ShopWeb.Endpoint,
  secret_key_base: "§{rand:Aa0_-:64}"
""",
    ),
    (
        "db password",
        "positional",
        "lib/Report.pm",
        """\
my $dbh = DBI->connect("DBI:mysql:database=reports;host=db01", "reporter", "§{human}", { RaiseError => 1 });
""",
    ),
    (
        "wifi psk",
        "human-password",
        "firmware/src/secrets.h",
        """\
#define WIFI_SSID "workshop"
#define WIFI_PASSWORD "§{human}"
#define BLYNK_AUTH_TOKEN "{rand:Aa0_-:32}"
""",
    ),
    (
        "blynk",
        "assign",
        "firmware/src/main.cpp",
        """\
#define BLYNK_TEMPLATE_ID "TMPL{rand:Aa0:8}"
#define BLYNK_AUTH_TOKEN "§{rand:Aa0_-:32}"
""",
    ),
    (
        "thingspeak",
        "assign",
        "sensor/sensor.ino",
        """\
const char* server = "api.thingspeak.com";
String apiKey = "§{rand:A0:16}";
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "src/client.cpp",
        """\
static const std::string kAuthToken = "§{rand:Aa0:40}";
""",
    ),
    (
        "openweathermap",
        "assign",
        "lib/services/weather.dart",
        """\
const String openWeatherApiKey = '§{rand:h:32}';
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "src/main/scala/Config.scala",
        """\
object Config {
  val ingestToken = "§{rand:Aa0:40}"
}
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "analysis/setup.R",
        """\
Sys.setenv(QUANDL_API_KEY = "§{rand:Aa0_-:20}")
""",
    ),
    (
        "http basic password",
        "userinfo",
        "Jenkinsfile",
        """\
stage('Deploy') {
    steps {
        sh 'curl -u deployer:§{human} -T target/app.war http://tomcat01:8080/manager/text/deploy?path=/app'
    }
}
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "Jenkinsfile",
        """\
pipeline {
    environment {
        ARGOCD_AUTH_TOKEN = '§{jwt}'
    }
}
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "Makefile",
        """\
REGISTRY ?= registry.corp.example
DEPLOY_TOKEN ?= §{rand:Aa0_-:40}

deploy:
\tcurl -H "Authorization: Bearer $(DEPLOY_TOKEN)" https://deploy.corp.example/hooks/app
""",
    ),
    (
        "db password",
        "assign",
        "scripts/backup.bat",
        """\
@echo off
set PGPASSWORD=§{human}
"C:\\Program Files\\PostgreSQL\\16\\bin\\pg_dump.exe" -h db01 -U backup erp > erp.sql
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "scripts/lua/config.lua",
        """\
local config = {
  api_key = "§{rand:h:40}",
  endpoint = "https://api.pricefeed.example/v1"
}
""",
    ),
    (
        "twilio",
        "positional",
        "src/Notify.php",
        """\
$twilio = new Twilio\\Rest\\Client('AC{rand:h:32}', '§{rand:h:32}');
""",
    ),
    (
        "sendgrid",
        "positional",
        "src/Mailer.php",
        """\
$sendgrid = new \\SendGrid('§SG.{rand:Aa0_-:22}.{rand:Aa0_-:43}');
""",
    ),
    (
        "algolia",
        "positional",
        "app/Services/Search.cs",
        """\
var client = new SearchClient("{rand:A0:10}", "§{rand:h:32}");
""",
    ),
    (
        "unnamed vendor",
        "positional",
        "internal/client/client.go",
        """\
c := pricefeed.New("§{rand:Aa0:40}", pricefeed.WithTimeout(5*time.Second))
""",
    ),
    (
        "unnamed vendor",
        "glued",
        "src/app.module.ts",
        """\
HttpModule.register({ headers: { 'x-acmecorp-key': '§{rand:h:40}' } }),
""",
    ),
    # ---- PowerShell ------------------------------------------------------------------------------------
    (
        "windows password",
        "cli-flag",
        "scripts/deploy.ps1",
        """\
$secure = ConvertTo-SecureString "§{human}" -AsPlainText -Force
$cred = New-Object System.Management.Automation.PSCredential ("CORP\\svc_deploy", $secure)
""",
    ),
    (
        "windows password",
        "cli-flag",
        "scripts/map-drive.ps1",
        """\
net use Z: \\\\fileserver\\projects /user:CORP\\jlee §{human}
""",
    ),
    (
        "unnamed vendor",
        "header",
        "tools/Invoke-Api.ps1",
        """\
$headers = @{ "X-ApiKey" = "§{rand:h:32}"; "Accept" = "application/json" }
Invoke-RestMethod -Uri $uri -Headers $headers
""",
    ),
    (
        "unnamed vendor",
        "assign",
        "profile.ps1",
        """\
$env:ACME_API_TOKEN = "§{rand:Aa0:40}"
""",
    ),
)
