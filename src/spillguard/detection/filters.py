"""Value filters for generic assignment rules: references and placeholders. Pure functions.

These are the GENERIC_PASSWORD settings the hosted variant exposes, each switchable
through :class:`~spillguard.core.models.PasswordFilters` (``[generic_password]`` in the
configuration): ``env_references`` drops values that only say where the secret
comes from at run time (an environment variable, a template variable, a secret
store, or a variable of the program), ``placeholders`` drops values that stand
where a real one will go, and ``min_length`` drops values too short to matter.
The other generic rules (``value_filter = "reference"``) apply both filters always.
"""

from __future__ import annotations

import re

from spillguard.core.models import PasswordFilters

TYPE_CHECKING = False  # typing's, without importing typing (a hook's start-up); mypy reads it alike
if TYPE_CHECKING:
    import regex


class _Lazy:
    """A pattern made (by regex, ``compiled``) on first search: most runs of a hook
    never need it. Flags are re's, whose values regex reads alike."""

    __slots__ = ("_args", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._pattern: regex.Pattern[str] | None = None

    def search(self, text: str) -> regex.Match[str] | None:
        if self._pattern is None:
            from spillguard.detection.compiled import compiled_pattern

            self._pattern = compiled_pattern(*self._args)
        return self._pattern.search(text)


# A value that only names where the secret comes from at run time.
_ENV_REFERENCE = _Lazy(
    r"""
    ^\$\{\{?[^}]*\}?\}$                     # ${X}, ${X:-default}, ${{ secrets.X }}
    | ^\$[A-Za-z_][A-Za-z0-9_]*$            # $X
    | ^\$\(.*\)$                            # $(command)
    | ^%\([A-Za-z_][A-Za-z0-9_]*\)[sdr]$    # %(x)s
    | ^%[sdr]$                              # %s
    | ^%[A-Za-z_][A-Za-z0-9_]*%$            # %X% (Windows)
    | ^@[A-Za-z_][A-Za-z0-9_.-]*@$          # @X@, @db.password@ (autoconf, Maven)
    | ^:[A-Za-z_][A-Za-z0-9_]*$             # :password (an SQL bind parameter, a Ruby symbol)
    | ^\{\{.*\}\}$                          # {{X}}, {{ .Values.x }}
    | ^\{[A-Za-z0-9_][^{}]*\}$              # {x}, {0}, {x:>8} (format fields)
    | ^\#\{.*\}$                            # #{x} (Ruby, Spring)
    | ^<%=?.*%>$                            # <%= x %> (ERB)
    | ^!vault\b                             # an Ansible Vault value
    | ^!(?:Ref|Sub|GetAtt|ImportValue|FindInMap|Join|If|Select|Base64)\b   # CloudFormation
    | ^@Microsoft\.KeyVault\(               # an Azure Key Vault reference
    | ^Ag[A-D][A-Za-z0-9+/]{300,}={0,2}$    # a SealedSecret, encrypted for its cluster
    | ^[a-z][a-z0-9+.-]*://\S+$ | ^(?:~|\.{1,2})?/[\w./-]+$   # a URL or a file path
    | ^/[\w./-]+(?::/?[\w./,-]+)+$          # a mount or a search path (/etc/passwd:ro)
    | ^[\w.-]+(?:/[\w.-]+)+\.(?:pem|key|crt|cer|der|p12|pfx|jks|keystore|pub   # a relative
        |json|ya?ml|txt|env|conf|cfg|ini|toml)$          # file path (certs/client-key.pem)
    | ^(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?/[\w./-]*$   # a host and path (www.google.com/)
    | ^(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|edu|gov|info|local|internal|localdomain)$
    | ^arn:aws[\w-]*:                       # an AWS resource name (a Secrets Manager ARN)
    | ^projects/[^/\s]+/(?:secrets|locations)/   # a Google Cloud secret or key name (or pattern)
    | \$\{[^}]*\} | \{\{.*?\}\}               # a template field inside the value
    | %[sdr] | %\([A-Za-z_]\w*\)[sdr]         # a printf-style field inside the value
    | \{\d*\}                               # a positional format field: '{}:{}', '{0}'
    | \{[A-Za-z_][A-Za-z0-9_.]*(?:[:!][^{}]*)?(?:\}|$)     # {x}, {x:>8}; cut at "}" when unquoted
    | (?i:os\.environ | os\.getenv | \bgetenv\s*\( | process\.env\b
    | \bSystem\.getenv | Environment\.GetEnvironmentVariable
    | \bENV\s*\[ | \bENV\.fetch | \benv::var | \$ENV\{ | \benv\s*\( | \bEnv\.get
    | \bsecrets\.[A-Za-z_] | \bvault: | \bssm: | \bawssm: | \bkeyring\.get)
    """,
    re.VERBOSE,
)

# An unquoted value that is code: a call, a subscript, an attribute chain, or a
# plain lower-case variable name (``password = new_password``). A literal
# password in a .env file mixes in digits, capitals or symbols.
_CODE_REFERENCE = _Lazy(
    r"""
    ^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*[(\[]    # f(, a.b(, x[
    | ^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+\.?$   # a.b.c, A::B
    | ^[a-z_]+$ | ^_*[a-z][a-z0-9]{0,24}(?:_[a-z0-9]{1,24})+$   # new_password, not sk_<48 hex>
    | ^[a-z]+(?:[A-Z][a-z]+)+$                                 # newPassword
    | ^_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$ | ^[A-Z]+$             # DB_PASSWORD, SMTP (constants)
    | ^_*(?:[A-Z]{1,5}[0-9]?)?(?!(?:[A-Z][a-z]+){2,}[0-9]+$)       # ReadableBuffer, String!,
      (?:[A-Z][a-z]{2,}[0-9]{0,2})+[.!]?$       # but two words and a number is a password
    | ^-?\d+$ | ^\d+(?:\s*(?:<<|>>|[|&^+*/-])\s*\d+)+$         # a number, 1<<8
    | ^0x[0-9A-Fa-f]{1,16}$                 # STENCIL_PASS_DEPTH_PASS: 0x0B96 (not a 64-digit key)
    | ^lambda\b                                               # password=lambda: ...
    """,
    re.VERBOSE,
)

# A value that stands where a real one will go.
_PLACEHOLDER = _Lazy(
    r"""
    ^(.)\1*$                                # ********, xxxx, ...., 0000 (one repeated character)
    | ^[*xX#.•_-]+$
    | ^<[^<>]*>$ | ^\[[^\[\]]*\]$ | ^\(\w[^()]*\)$   # <your password>, [REDACTED], (hidden)
    | ^(?:change[-_ ]?(?:me|it|this)|password\d?|passw(?:or)?d|pass|pwd|secret|
          redacted|removed|hidden|masked|placeholder|example|sample|dummy|fake|
          test|testing|none|null|nil|undefined|true|false|empty|todo|tbd|fixme|
          your[-_ ]?\w*|my[-_ ]?password|enter[-_ ]?\w*|insert[-_ ]?\w*|put[-_ ]?\w*|
          foo|bar|baz|foobar|abc123|123456\d*|12345678|qwerty|admin|root|user|username|
          secret[-_]?key|api[-_]?key|token|value|string|str|default|required|optional|
          letmein|hunter2|foobared|tiger|s3cr3t|p@ssw0rd|passw0rd|xyz|xxx\w*|na|n/a|unknown|unset|
          not[-_ ]?set|replace[-_ ]?me|fill[-_ ]?me[-_ ]?in|set[-_ ]?me|override[-_ ]?me)$
    | ^(?:your|my|some|the|enter|insert|replace)[-_ ]\w+
    | ^(?:s3cr3t|secret|supersecret|topsecret|changeme)[\w!@\#$%.\\-]*$
    | \.\.\.$ | ^\.\.\.                     # abc..., ...xyz (elided)
    | ^\$(?:2[abxy]?|argon2(?:id|i|d)|apr1|[1567]|y|scrypt|pbkdf2[\w-]*)\$   # a password hash
    | ^(?:pbkdf2_sha\d+|bcrypt(?:_sha256)?|argon2|scrypt)\$          # a Django password hash
    | ^eyJhbGciOi[A-Za-z0-9_-]*$            # a JWT header alone: no claims, no signature
    | ^[^\W\d_]+(?:\ [^\W\d_']+)+$          # words and spaces: a label ("Mot de passe"), not a key
    | \*{3}                                 # partly masked
    | ^[\w\ -]*passw(?:or)?d[\w\ -]*$       # a label ("no-password-required") or a weak sample
    | ^(?:passwort|kennwort|contrase[ñn]a|senha|wachtwoord|l[öo]senord|adgangskode|salasana
        |has[łl]o|parola|heslo|jelsz[óo]|lozinka|geslo|пароль|парола|密码|密碼|パスワード
        |비밀번호|mật\ khẩu|şifre|sifre|κωδικός|סיסמה|كلمة\ المرور)\b   # a translated label
    | [xX]{6} | <[\w\ .-]+>                 # a prefix and filler: gldt-xxxxxx, ATBB<your-key>
    | ^[A-Za-z0-9]{2,12}[-_]$               # a token's prefix alone (gldt-, cut at "<")
    | (?-i:^[A-Z][A-Za-z]*[.:]$)            # prose: "password: Required. The ..."
    | (?-i:^_*[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+$)   # a metavariable: OAUTH2-CLIENT-SECRET
    | ^(?:bool|boolean|int|integer|number|float|bytes|object|any|list|dict|array|char|text)$
    | ^&(?:lt|\#x3c|\#60)(?:;|$)             # an HTML-escaped <placeholder>
    | \b(?:optional|leave\ (?:it\ )?(?:empty|blank)|not\ used|goes\ here|top[-_\ ]?secret)\b
    | ^test[\w!@\#$%.-]*$ | ^(?:blah|incorrect|wrong|invalid|bad|correct|right|ignored)$
    | ^p[a@4]ss?w[o0]rd[!.]?$ | ^p@55w0rd!?$ | ^notasecret$    # P4ssword, P@55w0rd (with
    # a year or more after it, a weak password people really use: P@ssw0rd2024)
    | ^\d+(?:\.\d+)+-?(?:\d+(?:\.\d+)*)?$  # a version: 3.0-3.12
    | (?:^|[-_.\ ])(?:fake|dummy|placeholder|sample|example|unsafe|tests?)(?:[-_.\ ]|$)
                                            # a word of a fixture: fake-secret-for-tests
    """,
    re.VERBOSE | re.IGNORECASE,
)

_QUOTES = "\"'`"

#: The always-on filters of the other generic rules.
REFERENCE_FILTERS = PasswordFilters(min_length=0)


# Runs of the alphabet or of the digits: typed by hand, never generated.
_SEQUENCES = ("abcdefghijklmnopqrstuvwxyz", "0123456789")
_SEQUENCE_RUN = 8


# Values printed in specifications and tutorials (RFC 6749, 6750, 7009 and 5849,
# OpenID Connect, jwt.io, oauthlib's docstrings, Google Authenticator's key URI
# example): they appear in every OAuth, JWT and TOTP library and are nobody's credential.
DOCUMENTED_EXAMPLES = (
    "2YotnFZFEjr1zCsicMWpAA",
    "tGzv3JOkF0XG5Qx2TlKWIA",
    "SplxlOBeZQQYbYS6WxSbIA",
    "czZCaGRSa3F0MzpnWDFmQmF0M2JW",
    "mF_9.B5f-4.1JqM",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "SlAV32hkKG",
    "8xLOxBtZp8",
    "45ghiukldjahdnhzdauz",
    "kjfch2345sdf",
    "sdf23409df",
    "h480djs93hd8",
    "hh5s93j4hdidpola",
    "hdhd0244k9j7ao03",
    "nnch734d00sl2jdk",
    "pfkkdhi9sl3r4s00",
    "kd94hf93k423kf44",
    "dpf43f3p2l4k3l03",
    "qwe089234lkjsdf",
    "lsdkfol23w54jlksdef",
    "0685bd9184jfhq22",
    "ad180jjd733klru7",
    "JBSWY3DPEHPK3PXP",
    # Vendors' documentation: AWS's access key pairs (every one ends in EXAMPLE or
    # EXAMPLEKEY), the Azure storage emulator's well-known account key, RFC 7519's
    # example signature, Mailgun's sample key, the sample passwords of the SQL Server
    # and PostgreSQL container images.
    "EXAMPLEKEY",
    "IOSFODNN7EXAMPLE",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "3ax6xnjp29jd6fds4gc373sgvjxteol0",
    "yourStrong(!)Password",
    "YourStrong@Passw0rd",
    "mysecretpassword",
    # OpenSSL's FIPS module integrity key, published in its source (fipskey.h).
    "f4556650ac31d35461610bac4ed81b1a181b2d8a43ea2854cbae22ca74560813",
)
# Compared case-insensitively: a base32 TOTP secret is written in either case.
_DOCUMENTED_LOWERED = tuple(example.lower() for example in DOCUMENTED_EXAMPLES)


def is_documented_example(secret: str) -> bool:
    lowered = secret.lower()
    return any(example in lowered for example in _DOCUMENTED_LOWERED)


def is_sequential(secret: str) -> bool:
    """True when the secret holds a run of 8 letters or digits in order (ABCDEFGH, 12345678)."""
    lowered = secret.lower()
    return any(
        sequence[start : start + _SEQUENCE_RUN] in lowered
        for sequence in _SEQUENCES
        for start in range(len(sequence) - _SEQUENCE_RUN + 1)
    )


def unquote(value: str) -> str:
    """The value with one pair of surrounding quotes removed."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES:
        return value[1:-1]
    return value


def is_quoted(value: str) -> bool:
    return unquote(value) != value


def is_env_reference(value: str) -> bool:
    """True for a value that names a variable, a template field or a secret store."""
    stripped = unquote(value).strip()
    if _ENV_REFERENCE.search(stripped) is not None:
        return True
    return not is_quoted(value) and _CODE_REFERENCE.search(stripped) is not None


def is_placeholder(value: str) -> bool:
    """True for an empty value or one that stands where a real one will go."""
    stripped = unquote(value).strip()
    return not stripped or _PLACEHOLDER.search(stripped) is not None


def password_value_rejected(value: str, settings: PasswordFilters) -> bool:
    """True when a generic rule's value is not a secret under ``settings``."""
    stripped = unquote(value).strip()
    if len(stripped) < settings.min_length:
        return True
    if settings.env_references and is_env_reference(value):
        return True
    return settings.placeholders and is_placeholder(value)
