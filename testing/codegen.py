"""Plausible source code, line by line, for generated repositories.

The text looks like an ordinary application: functions, configuration, prose, and
the usual near misses a scanner must not report (``password = os.environ[...]``,
``token = request.headers[...]``), so benchmarks exercise the keyword prefilter and
the regular expressions the way real code does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

WORDS = (  # noqa: SIM905 - a word list reads best as words
    "account address amount archive batch buffer cache client config context count cursor "
    "data delta digest entry event field filter handler header index item job key label "
    "limit loader message metric node offset order owner page parser path payload queue "
    "record region report request response result route schema session size source state "
    "status stream target task tenant timeout token total user value version worker"
).split()
VERBS = (  # noqa: SIM905 - a word list reads best as words
    "build check collect compute create decode delete encode fetch find flush format "
    "handle load merge normalize open parse publish read refresh register render reset "
    "resolve save send split sync update validate write"
).split()
TYPES = (  # noqa: SIM905 - a word list reads best as words
    "Account Batch Cache Client Config Event Handler Job Message Queue Record Session"
).split()
# Lines with a rule's keyword and no secret: the false positives a scanner must not raise.
NEAR_MISSES = (
    '{i}password = os.environ.get("{U}_PASSWORD")',
    '{i}token = request.headers.get("Authorization", "")',
    "{i}api_key = settings.{U}_API_KEY",
    '{i}aws_region = os.environ["AWS_REGION"]',
    '{i}secret_name = "{w}-secret"',
    "{i}if not password:",
    '{i}logger.debug("rotating the {w} key for %s", {w})',
    "{i}key = cache_key({w}, {w2})",
    '{i}passwd_file = Path("/etc/{w}/passwd")',
)
EXTENSIONS = (".py", ".py", ".py", ".js", ".go", ".yaml", ".md")


def name(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"


def _python_statement(rng: random.Random, indent: str) -> str:
    w, w2, verb = rng.choice(WORDS), rng.choice(WORDS), rng.choice(VERBS)
    choices = (
        f"{indent}{w} = {verb}_{w2}({w2}, limit={rng.randint(1, 500)})",
        f"{indent}if {w} is None:",
        f"{indent}    return {w2}",
        f"{indent}for {w} in {w2}s:",
        f'{indent}logger.info("{verb} {w} %s for {w2}", {w})',
        f"{indent}# {verb} the {w} before the {w2} is {rng.choice(VERBS)}d",
        f"{indent}{w2}s.append({rng.choice(TYPES)}({w}={w}, {w2}={w2}))",
        f"{indent}return {{{w!r}: {w}, {w2!r}: {w2}}}",
    )
    if rng.random() < 0.05:
        template = rng.choice(NEAR_MISSES)
        return template.format(i=indent, U=w.upper(), w=w, w2=w2)
    return rng.choice(choices)


def _python_block(rng: random.Random) -> list[str]:
    args = ", ".join(name(rng) for _ in range(rng.randint(0, 3)))
    lines = [f"def {rng.choice(VERBS)}_{name(rng)}({args}):"]
    lines.append(f'    """{rng.choice(VERBS).capitalize()} the {rng.choice(WORDS)}."""')
    lines += [_python_statement(rng, "    ") for _ in range(rng.randint(2, 14))]
    return [*lines, ""]


def _js_block(rng: random.Random) -> list[str]:
    name = f"{rng.choice(VERBS)}{rng.choice(TYPES)}"
    lines = [f"export async function {name}({rng.choice(WORDS)}, options = {{}}) {{"]
    for _ in range(rng.randint(2, 12)):
        w, w2 = rng.choice(WORDS), rng.choice(WORDS)
        lines.append(
            rng.choice(
                (
                    f"  const {w} = await {rng.choice(VERBS)}({w2}, options);",
                    f"  if (!{w}) {{ return null; }}",
                    f"  // {rng.choice(VERBS)} the {w} of every {w2}",
                    f"  {w2}.{w} = {w}.map((item) => item.{w2});",
                    f"  const token = options.{w}Token ?? process.env.{w.upper()}_TOKEN;",
                )
            )
        )
    return [*lines, "}", ""]


def _go_block(rng: random.Random) -> list[str]:
    kind = rng.choice(TYPES)
    lines = [
        f"func (s *{kind}Service) {rng.choice(VERBS).capitalize()}(ctx context.Context) error {{"
    ]
    for _ in range(rng.randint(2, 12)):
        w = rng.choice(WORDS)
        lines.append(
            rng.choice(
                (
                    f"\t{w}, err := s.store.Get{kind}(ctx, s.{w}ID)",
                    "\tif err != nil {\n\t\treturn err\n\t}",
                    f'\ts.log.Info("{rng.choice(VERBS)}", "{w}", {w})',
                    f"\t// {rng.choice(VERBS)} the {w} first",
                )
            )
        )
    return [*"\n".join([*lines, "\treturn nil", "}", ""]).split("\n")]


def _yaml_block(rng: random.Random) -> list[str]:
    lines = [f"{rng.choice(WORDS)}:"]
    for _ in range(rng.randint(2, 8)):
        w = rng.choice(WORDS)
        value = rng.choice((str(rng.randint(1, 9000)), "true", f"${{{w.upper()}}}", w))
        lines.append(f"  {w}_{rng.choice(WORDS)}: {value}")
    return lines


def _markdown_block(rng: random.Random) -> list[str]:
    sentence = " ".join(rng.choice(WORDS + VERBS) for _ in range(rng.randint(8, 20)))
    return [f"## {rng.choice(VERBS).capitalize()} {rng.choice(WORDS)}", "", sentence + ".", ""]


BLOCKS = {
    ".py": _python_block,
    ".js": _js_block,
    ".go": _go_block,
    ".yaml": _yaml_block,
    ".md": _markdown_block,
}
HEADERS = {
    ".py": ["import logging", "import os", "", "logger = logging.getLogger(__name__)", ""],
    ".js": ['import { fetch } from "./http.js";', ""],
    ".go": ["package service", "", 'import "context"', ""],
    ".yaml": ["# generated settings", ""],
    ".md": ["# Notes", ""],
}


def block(extension: str, rng: random.Random) -> list[str]:
    """A few lines of new code (a function, a settings block, a paragraph)."""
    return BLOCKS[extension](rng)


def line(extension: str, rng: random.Random) -> str:
    """One replacement line of the file's language."""
    lines = block(extension, rng)
    return rng.choice([text for text in lines if text] or [""])


def new_file(extension: str, rng: random.Random) -> list[str]:
    lines = list(HEADERS[extension])
    for _ in range(rng.randint(2, 8)):
        lines += block(extension, rng)
    return lines
