"""What a value looks like: a digest, a generated token, a token a secret word names.

Pure functions, the judgement behind GENERIC_TOKEN_NEAR_WORD and the hash context
every built-in rule respects.

A digest is random-looking by construction, so no rule can tell it from a key by
its characters alone; the text around it tells. A value that sits inside a token
labelled as a digest (``sha256=…`` in a wheel's RECORD, ``sha512-…`` in a lock
file's ``integrity``, ``h1:…`` in go.sum, ``sha256:…`` in an image reference) is
that digest, or a piece of it, whatever shape a rule saw in it.
"""

from __future__ import annotations

import functools
import math
import re


@functools.cache
def _re(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: a commit hook rarely needs any of these."""
    return re.compile(pattern)


#: How far before a value its label is looked for: a label, its operator and the
#: start of a digest the value is a piece of (a SHA-512 in base64 is 88 characters).
_REACH = 160

_HASH_LABEL = r"""(?ix)
    (?<![A-Za-z0-9])
    (?:sha-?(?:1|224|256|384|512)(?:-\d+)?|md5|blake2[bs]?|blake3|xxh(?:32|64|128)|crc32c?|h1
       |integrity|checksum|digest)
    ["']?\s*[=:-]\s*["']?
    [A-Za-z0-9+/_=-]*\Z
    """


def in_hash_context(text: str, start: int) -> bool:
    """Whether the value starting at ``start`` in ``text`` lies in a digest named as
    one just before it: the label, its operator, then nothing but digest characters."""
    before = text[max(0, start - _REACH) : start]
    return _re(_HASH_LABEL).search(before) is not None


# ---------------------------------------------------------------- a generated value

#: Words that make a value readable, not generated: programming and English words
#: of four letters or more as they appear in identifiers, keys and labels. A value
#: holding one as a run of its letters (``user_profile_cache``, ``homepageTitle``)
#: was typed by a person; a random run of letters of this length is rarely a word.
_WORDS = frozenset(
    """
    able about access account action active admin after agent alert alias alpha also
    api app application apps array asset assets auth author back backup base basic
    before begin beta bind blob blue body book bool boot bottom bound branch break
    bucket buffer build bundle button byte bytes cache call callback cancel card case
    cast catch cell chain change channel char chart check child chunk class clean
    clear click client clock close cloud cluster code color column command comment
    commit common config connect console const contact content context control cookie
    copy core count cover create credential cron crypto current cursor custom cycle
    data database date debug decode default define delete demo deny deploy depth
    design detail device dialog digest direct disable display document domain done
    down draft drive drop dummy dump each edge edit email empty enable encode end
    engine entry error event example exit expire export extra fail fake false feature
    field file filter final find first flag float flow folder font form format frame
    free from front full function gateway general generate get global google grant
    graph green grid group guest handle hash have head header health hello help here
    hidden history home hook host html http icon image import index info input insert
    instance item items java join json just keep kernel keys kind label lang large
    last layer layout left length level library light limit line link list live load
    local lock login logo long lookup main make manager mark master match media member
    memory menu merge message meta method middle mobile mock mode model module money
    more mount move name native network never next node none normal note null number
    object offset only open option order other output owner pack package page panel
    param parent parse part party pass password patch path pattern payload people
    person phone plain plan platform play plugin point policy pool port post power
    prefix press preview primary print private process prod product profile project
    prompt proxy public publish pull push query queue quick random range rate read
    ready real record redirect refresh region register release remote remove render
    repeat reply report request require reset resource response rest result return
    review right role root route rule runner safe sample save scale schema scope
    screen script search second secret section secure select send server service
    session setting settings setup shape share shared shell short show side sign
    signal simple single site size slot small sort source space special split stack
    stage standard start state static status step storage store stream string style
    submit success super support switch sync system table tag target task team temp
    template tenant test text theme thing time timeout title today token tool top
    total trace track train tree true type update upload user users util valid value
    values version view virtual visible wait warn watch web webhook where white
    widget window word work worker world write year your zone
    cert certificate scheme extension external shrouded usage purpose serial init
    load params signature detached cofactor derive context symbol closure key set
    """.split()  # noqa: SIM905 - a paragraph of words reads better than 500 quoted ones
)
#: The runs of one case a value's letters fall into (camel case split at its capitals).
_LETTER_RUN = r"[A-Z]?[a-z]{2,}|[A-Z]{4,}(?![a-z])"
#: A three-letter word counts only as a whole run (the ``Get`` of ``CertGetKey``):
#: random letters hold one inside a longer run too often.
_SHORTEST_INSIDE = 4
_LONGEST_WORD = max(map(len, _WORDS))
#: Parts of an identifier: three or more, joined by _ or - (gnutls_x509_crt_t).
_IDENTIFIER = r"[A-Za-z][A-Za-z0-9]*(?:[_-](?:[A-Za-z][A-Za-z0-9]*|[0-9]+)){2,}"
_IDENTIFIER_PART = 8
#: Of these alphabets, in this order, the first that holds every character of a value.
_ALPHABETS = (
    ("hex", frozenset("0123456789abcdef")),
    ("hex", frozenset("0123456789ABCDEF")),
    ("base62", frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
    ("base64url", frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")),
    ("base64", frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/=")),
)
_ALPHABET_SIZE = {"hex": 16, "base62": 62, "base64url": 64, "base64": 64}
_UUID = r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
#: A random UUID (RFC 9562 version 4: the version digit 4, the variant 8 to b): made
#: to be unguessable, as services make tokens of them (Heroku, Keycloak, Postmark,
#: Consul, Snyk, npm). The other versions are a time and a node (1, 6, 7) or a name's
#: digest (3, 5): identifiers whoever knows the time or the name can compute.
_RANDOM_UUID = r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
#: The share of the entropy random characters of its alphabet and length have that a
#: generated value reaches (almost every random one does); text typed by a person,
#: with its repeated letters, falls below.
_ENTROPY_SHARE = 0.85
MIN_LENGTH = 16
_BASE64_LENGTH = 32
MAX_LENGTH = 100


def alphabet_of(value: str) -> str | None:
    """The narrowest alphabet of generated values that holds ``value``, or None."""
    characters = set(value)
    for name, alphabet in _ALPHABETS:
        if characters <= alphabet:
            return name
    return None


def has_word(value: str) -> bool:
    """Whether a run of the value's letters in one case holds a word a person would
    type (four letters or more): in 40 random base62 characters that happens about
    once in a thousand values."""
    for run in _re(_LETTER_RUN).findall(value):
        lowered = run.lower()
        if lowered in _WORDS:
            return True
        # Every piece of the run as long as a word can be: a set lookup each, cheaper
        # than compiling an alternation of every word in a commit hook.
        for start in range(len(lowered) - _SHORTEST_INSIDE + 1):
            for end in range(
                start + _SHORTEST_INSIDE, min(len(lowered), start + _LONGEST_WORD) + 1
            ):
                if lowered[start:end] in _WORDS:
                    return True
    return False


def is_identifier(value: str) -> bool:
    """Whether ``value`` is an identifier of short parts (``PKCS12_key_gen_utf8``):
    random base64url has a separator every 32 characters, not every few."""
    if _re(_IDENTIFIER).fullmatch(value) is None:
        return False
    parts = re.split(r"[_-]", value)
    return sum(map(len, parts)) / len(parts) <= _IDENTIFIER_PART


def expected_entropy(length: int, alphabet_size: int) -> float:
    """About the Shannon entropy (bits a character) of ``length`` random characters of
    an alphabet of ``alphabet_size``: its logarithm, less the bias of a short sample
    (Miller and Madow), for at most as many symbols as there are characters."""
    symbols = min(length, alphabet_size)
    return math.log2(symbols) - (symbols - 1) / (2 * length * math.log(2))


def _random_enough(value: str, alphabet: str) -> bool:
    from spillguard.detection.entropy import shannon

    if shannon(value) < _ENTROPY_SHARE * expected_entropy(len(value), _ALPHABET_SIZE[alphabet]):
        return False
    digits = sum(character.isdigit() for character in value)
    letters = sum(character.isalpha() for character in value)
    if alphabet == "hex":
        # A number, or hex with no letter: a timestamp, a phone number, a count.
        return digits >= 2 and letters >= 2
    # Generated base62 of 16 characters or more holds a digit and both cases all but
    # always; a name of words in camel case has no digit.
    return digits >= 1 and any(c.isupper() for c in value) + any(c.islower() for c in value) >= 1


def looks_generated(value: str, *, uuid_allowed: bool = False) -> bool:
    """Whether ``value`` has the shape of a generated key or token: 16 to 100 characters
    of one alphabet (hex, base62, base64url, base64, dot-separated segments of them, or
    a UUID where its name says it is a key or a token), as random as that alphabet
    allows for its length, with no word a person would type."""
    if not MIN_LENGTH <= len(value) <= MAX_LENGTH:
        return False
    if _re(_UUID).fullmatch(value):
        return uuid_allowed
    segments = value.split(".")
    if len(segments) > 1:
        return len(segments) <= 4 and all(
            len(segment) >= 6 and looks_generated_segment(segment) for segment in segments
        )
    return looks_generated_segment(value)


def looks_generated_segment(value: str) -> bool:
    alphabet = alphabet_of(value.rstrip("="))
    if alphabet is None or has_word(value) or is_identifier(value):
        return False
    # Base64 keys encode 24 bytes or more, and padding makes whole quads: a shorter
    # value or one of a length no encoder writes is a cut-off sample.
    if (alphabet == "base64" or value.endswith("=")) and (
        len(value) < _BASE64_LENGTH or ("=" in value and len(value) % 4)
    ):
        return False
    if len(value) < MIN_LENGTH:
        return _random_enough(value, alphabet) if len(value) >= 6 else False
    return _random_enough(value, alphabet)


# ---------------------------------------------------------------- a token near a secret word

#: Words in the name around a secret word that say the value is no secret: an
#: identifier, a digest, a place, a size (``TOKEN_URL``, ``cache_key``, ``publicKey``).
_HARMLESS_NAME = r"""(?ix)
    public|pub(?![a-z])|foreign|sort|cache|partition|page|cursor|csrf|xsrf|site
    |next|prev|continuation|resume|routing|sync|lookup|translation|i18n|locale
    |idempoten|nonce|request|trace|correlation|hash|checksum|digest|commit|sha\d*|md5
    |fingerprint|etag|salt|seed|test|fake|dummy|example|sample|mock|placeholder
    |(?:^|[_.-]|(?<=[a-z]))(?:id|ids|name|names|url|uri|endpoint|host|port|path|file|dir|type
      |header|len|length|size|ttl|timeout|expiry|expires|prefix|suffix|version|label|field
      |format|pattern|regex|count|min|max|enabled|mode|kind|index|column|event|store
      |provider|policy|length|level|log|time|code|char|chars)s?$
    """
#: A name that ends in the kind of secret a random UUID can be: a token or a secret,
#: or a key a credential word qualifies (a primary, object or row key is a UUID as
#: often as not, and an identifier).
_UUID_CREDENTIAL_NAME = r"""(?ix)
    (?:token|tkn|secret)s?$
    |(?:api|auth|access|secret|private|license|licence|subscription|account|master
       |signing|service)[_.-]?keys?$
    """
#: Before a name that is the secret word alone (``key = ...``): prose or a log line
#: (``using key=``, ``with apikey ...``) gives it away; an assignment alone does not.
_PROSE_BEFORE = r"[A-Za-z]{2,}[,:]?\s+\S*$"
#: A word just before the name, no comma between (``using key: <hex>``, not a repr's
#: ``pending, key: <hex>``).
_WORD_BEFORE = r"(?<![,:])\b[A-Za-z]{2,}[ \t]+$"


def near_secret_word(
    line: str, word: tuple[int, int], name_end: int, secret: tuple[int, int]
) -> bool:
    """Whether the value at ``secret`` in ``line`` is a credential by the secret word at
    ``word`` in the name before it (the name runs to ``name_end``): the value looks
    generated and no digest, and the name says nothing else of it."""
    value = line[slice(*secret)]
    lowered = line[slice(*word)].lower()
    name_start = word[0]
    while name_start > 0 and (line[name_start - 1].isalnum() or line[name_start - 1] in "_.-"):
        name_start -= 1
    name = line[name_start:name_end]
    if _re(_HARMLESS_NAME).search(name) is not None:
        return False
    if name.lower() == lowered and not _bare_word_told(line, name_start, name_end, secret[0]):
        return False
    between = line[name_end : secret[0]]
    if name_end > word[1] and (between == "-" or "(" in between):
        # A word glued to its value (acmeKEY-...) is followed by the value at once:
        # sk-ant-api03-... is a token's own prefix, the word inside it. And a call of
        # a function the word is part of (key_split('...')) is handed data.
        return False
    # A random UUID is a key where its name says API key or API token (Heroku's are
    # UUIDs) or ends in token, secret or a credential's key (_authToken,
    # KEYCLOAK_SECRET, LICENSE_KEY); an identifier elsewhere (a request's, a user's,
    # a database row's primary key), and so is any other UUID (the nil UUID of a
    # sample config, a name's digest).
    uuid_allowed = random_uuid(value) and (
        "api" in name.lower() or _re(_UUID_CREDENTIAL_NAME).search(name) is not None
    )
    if not looks_generated(value, uuid_allowed=uuid_allowed):
        return False
    return not in_hash_context(line, secret[0])


def random_uuid(value: str) -> bool:
    """Whether ``value`` is a random (version 4) UUID."""
    return _re(_RANDOM_UUID).fullmatch(value) is not None


def _bare_word_told(line: str, name_start: int, name_end: int, value_start: int) -> bool:
    """Whether a name that is the secret word alone (``key``, ``token``) says its value
    is a secret: in prose or a log line (``using key=...``, ``token ... accepted``),
    not in an assignment of its own (``key = "..."``: GENERIC_BARE_KEY's, with its
    stricter shape), and a lowercase ``key`` only as ``key=`` (a repr's ``key: <hex>``
    names a cache entry; a note's ``Zapdash KEY <hex>`` is written for a person), or as
    ``key:`` right after a word (``using key: <hex>``)."""
    if not _re(_PROSE_BEFORE).search(line, 0, name_start):
        return False
    if line[name_start:name_end] != "key":
        return True
    between = line[name_end:value_start]
    return between == "=" or (
        between.strip() == ":" and _re(_WORD_BEFORE).search(line, 0, name_start) is not None
    )


def generated_value(line: str, secret: tuple[int, int]) -> bool:
    """Whether the value at ``secret`` looks generated and is no digest in context: the
    judgement of a value whose name alone (``key`` under an INI section) says nothing."""
    return looks_generated(line[slice(*secret)]) and not in_hash_context(line, secret[0])


# ---------------------------------------------------------------- a value handed to a client

#: Calls that take a credential by position: a receiver's factory, initializer or
#: login (``cohere.Client``, ``Client::new``, ``pricefeed.New``, ``rollbar.init``,
#: ``StreamChat.getInstance``, ``client.login``, ``jwt.sign``, ``hmac.new``,
#: ``keyring.set_password``), a class named for a client (``SearchClient``,
#: ``BraintreeGateway``), anything built with ``new``, and an Objective-C message
#: that starts, sets up or configures a service (``[Flurry startSession:@"..."]``).
_FACTORY = frozenset(
    """
    new newclient create createclient getinstance getclient sharedinstance init initialize
    initialise initializeapp configure setup login signin logon authenticate authorize
    connect sign set_password setpassword startsession start_session
    """.split()  # noqa: SIM905 - as _WORDS
)
_CLIENT_CLASS = r"(?:Client|Gateway|Api|API|Sdk|SDK|Bot)"
_SELECTOR = r"(?i)^(?:start|setup|configure|init|set)[A-Za-z]*$"
#: Names of the callee that say its argument is data, not a credential: a digest, an
#: identifier, an address, a number, a date, a test's expectation or fixture, a
#: repository's revision.
_DATA_CALLEE = r"""(?ix)
    hash|digest|sha\d|md5|crc|uuid|guid|objectid|oid|hex|bytes|buffer|decode|encode
    |parse|assert|expect|equal|compare|match|mock|fake|stub|test|public|pubkey|address
    |contract|color|colour|regex|pattern|date|time|version|commit|revision|checkout
    |path|url|uri|error|exception|bignum|bignumber|decimal|number|symbol|cache|translat
    |fixture|^(?:bn|int|long|str|string|text|id|get|set|add|push|append|log|print|format
    |git|repo)$
    """
#: An Ethereum address: public, and as random-looking as a key.
_ADDRESS = r"0x[0-9a-fA-F]{40}"
#: The next argument a variable named for a secret: the literal before it is its id
#: (the rule's pattern takes the last literal of the arguments, the secret of an id
#: and a secret written side by side).
_ID_BEFORE_ITS_VARIABLE = (
    r"(?i)\s*,\s*[A-Za-z_$][\w.$]*(?:token|secret|key|pass(?:word|wd)?|pwd|credentials?)s?\s*[,)]"
)
#: Hex handed to a call shorter than this is an identifier more often than a key (a
#: Mongo ObjectId's 24, an abbreviated commit, a public app key of 20): keys of
#: services that write them in hex are 32 characters or more.
_SHORTEST_HEX_ARGUMENT = 32


def client_argument(
    line: str, callee: tuple[int, int], secret: tuple[int, int], *, message: bool = False
) -> bool:
    """Whether the literal at ``secret`` is a credential handed to the call ``callee``
    (its name as written: ``new Acme``, ``acme.Client``, ``Client::new``; with
    ``message``, an Objective-C receiver and selector, ``Flurry startSession``): the
    call takes credentials by position and names no data, and the value looks
    generated (no UUID: positional UUIDs are identifiers) and is no digest."""
    written = line[slice(*callee)]
    value = line[slice(*secret)]
    constructed = written.startswith("new ")
    if constructed:
        written = written[4:].lstrip()
    parts = [part for part in re.split(r"\.|::|->|\s+", written) if part]
    if not parts or any(_re(_DATA_CALLEE).search(part) for part in parts):
        return False
    last = parts[-1]
    if message:
        told = _re(_SELECTOR).match(last) is not None
    else:
        told = (
            (last.lower() in _FACTORY and len(parts) > 1)
            or last.lower().startswith("newstatic")
            or _re(rf"(?:^|[a-z0-9]){_CLIENT_CLASS}$").search(last) is not None
            or (constructed and last[:1].isupper())
        )
    if not told or _re(_ADDRESS).fullmatch(value):
        return False
    if _re(_ID_BEFORE_ITS_VARIABLE).match(line, secret[1] + 1):
        # An id before the variable that holds its secret: Client("AC...", auth_token).
        return False
    if alphabet_of(value) == "hex" and len(value) < _SHORTEST_HEX_ARGUMENT:
        return False
    return looks_generated(value) and not in_hash_context(line, secret[0])
