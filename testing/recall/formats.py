"""Files of many formats and code styles, each with one value assigned to one name in it.

A format is a path and a file template: ``@VALUE@`` marks the value's place and the
name is spelled as the file's language spells it (``@NAME@`` DB_PASSWORD, ``@name@``
db_password, ``@camel@`` dbPassword, ``@Camel@`` DbPassword, ``@dotted@`` db.password).
"""

from __future__ import annotations

import dataclasses

#: Format name -> (path, template). The value's line holds ``@VALUE@``.
FORMATS: dict[str, tuple[str, str]] = {
    "env": (".env", "# service settings\nAPP_ENV=production\n@NAME@=@VALUE@\nLOG_LEVEL=info\n"),
    "env-quoted": (".env.production", 'APP_ENV=production\n@NAME@="@VALUE@"\n'),
    "yaml": (
        "config/settings.yaml",
        "app:\n  region: eu-west-1\n  @name@: @VALUE@\n  retries: 3\n",
    ),
    "compose": (
        "docker-compose.yml",
        (
            "services:\n  api:\n    image: acme/api:1.4\n    environment:\n"
            '      @NAME@: "@VALUE@"\n      LOG_LEVEL: info\n'
        ),
    ),
    "compose-list": (
        "compose.yaml",
        "services:\n  worker:\n    environment:\n      - PORT=8080\n      - @NAME@=@VALUE@\n",
    ),
    "json": (
        "config/production.json",
        '{\n  "service": "billing",\n  "@camel@": "@VALUE@",\n  "timeout": 30\n}\n',
    ),
    "python": ("app/settings.py", 'import os\n\nDEBUG = False\n@NAME@ = "@VALUE@"\n'),
    "python-dict": (
        "app/client.py",
        'CONFIG = {\n    "region": "eu-west-1",\n    "@name@": \'@VALUE@\',\n}\n',
    ),
    "javascript": (
        "src/config.js",
        "export const config = {\n  port: 8080,\n  @camel@: '@VALUE@',\n};\n",
    ),
    "typescript": ("src/env.ts", 'const @camel@: string = "@VALUE@";\nexport default @camel@;\n'),
    "go": ("internal/config/config.go", 'package config\n\nconst @camel@ = "@VALUE@"\n'),
    "java": (
        "src/main/java/com/acme/Config.java",
        'public final class Config {\n    private static final String @NAME@ = "@VALUE@";\n}\n',
    ),
    "csharp": ("Program.cs", 'var @camel@ = "@VALUE@";\nConsole.WriteLine("ready");\n'),
    "kotlin": (
        "app/src/main/kotlin/Config.kt",
        'object Config {\n    val @camel@ = "@VALUE@"\n}\n',
    ),
    "rust": ("src/main.rs", 'const @NAME@: &str = "@VALUE@";\n\nfn main() {}\n'),
    "properties": (
        "src/main/resources/application.properties",
        "server.port=8080\n@dotted@=@VALUE@\n",
    ),
    "xml-attribute": (
        "web.config",
        '<appSettings>\n  <add key="@Camel@" value="@VALUE@" />\n</appSettings>\n',
    ),
    "xml-element": ("config.xml", "<config>\n  <@camel@>@VALUE@</@camel@>\n</config>\n"),
    "dockerfile-env": ("Dockerfile", 'FROM python:3.12-slim\nENV @NAME@=@VALUE@\nCMD ["app"]\n'),
    "dockerfile-arg": ("build/Dockerfile", "FROM node:20\nARG @NAME@=@VALUE@\nRUN npm ci\n"),
    "shell": ("scripts/deploy.sh", '#!/bin/sh\nset -e\nexport @NAME@="@VALUE@"\n./deploy\n'),
    "k8s-secret": (
        "k8s/secret.yaml",
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  @NAME@: "@VALUE@"\n',
    ),
    "k8s-env": (
        "k8s/deployment.yaml",
        '        env:\n        - name: @NAME@\n          value: "@VALUE@"\n',
    ),
    "terraform": ("main.tf", 'resource "acme_service" "api" {\n  @name@ = "@VALUE@"\n}\n'),
    "tfvars": ("prod.tfvars", 'region = "eu-west-1"\n@name@ = "@VALUE@"\n'),
    "php": ("config/app.php", "<?php\nreturn [\n    '@name@' => '@VALUE@',\n];\n"),
    "php-variable": ("index.php", "<?php\n$@camel@ = '@VALUE@';\n"),
    "ruby": (
        "config/initializers/app.rb",
        "Rails.application.configure do\n  config.@name@ = '@VALUE@'\nend\n",
    ),
    "toml": ("config.toml", '[service]\nname = "api"\n@name@ = "@VALUE@"\n'),
    "ini": ("setup.cfg", "[auth]\nuser = deploy\n@name@ = @VALUE@\n"),
    "github-actions": (
        ".github/workflows/ci.yml",
        "jobs:\n  test:\n    env:\n      @NAME@: @VALUE@\n",
    ),
}


@dataclasses.dataclass(frozen=True, slots=True)
class Placed:
    """A file with the value in it: its path, text and the value's 1-based line."""

    path: str
    text: str
    line: int


def spellings(name: str) -> dict[str, str]:
    """The name as each kind of file spells it, from an UPPER_SNAKE_CASE name."""
    words = name.lower().split("_")
    camel = words[0] + "".join(word.capitalize() for word in words[1:])
    return {
        "@NAME@": name,
        "@name@": name.lower(),
        "@camel@": camel,
        "@Camel@": camel[:1].upper() + camel[1:],
        "@dotted@": ".".join(words),
    }


def place(format_name: str, name: str, value: str) -> Placed:
    """``value`` assigned to ``name`` in a file of ``format_name``."""
    path, template = FORMATS[format_name]
    text = template
    for marker, spelled in spellings(name).items():
        text = text.replace(marker, spelled)
    line = text[: text.index("@VALUE@")].count("\n") + 1
    return Placed(path=path, text=text.replace("@VALUE@", value), line=line)


def in_file(path: str, line_text: str, before: str = "", after: str = "") -> Placed:
    """A file at ``path`` holding ``line_text`` between other lines."""
    head = f"{before}\n" if before else ""
    return Placed(path=path, text=f"{head}{line_text}\n{after}", line=head.count("\n") + 1)
