"""General software vocabulary for query expansion in `search_tools`.

People ask for a "folder", a "ticket" or a "PR"; tool definitions say "directory", "issue" and
"pull request". Lexical ranking cannot see that these are the same thing, so a request's words
are expanded with the other words of their group below (scored at `EXPANSION_WEIGHT` of a word
the user wrote). The groups are everyday equivalences of the field — CRUD verbs, common
abbreviations, common nouns — not the vocabulary of any one server or request set.
"""

from __future__ import annotations

#: Words that mean the same action or thing in tool descriptions (each group is symmetric).
SYNONYMS: tuple[tuple[str, ...], ...] = (
    # verbs
    ("create", "add", "new", "make", "insert", "register"),
    ("get", "fetch", "retrieve", "read", "show", "view", "display", "see"),
    ("list", "enumerate", "browse"),
    ("update", "edit", "modify", "change", "patch"),
    ("delete", "remove", "erase", "destroy", "drop", "discard", "purge", "forget"),
    ("search", "find", "lookup", "query", "locate"),
    ("run", "execute", "exec", "launch", "invoke"),
    ("stop", "kill", "terminate", "halt", "abort", "cancel"),
    ("send", "post", "publish"),
    ("move", "rename", "relocate", "transfer"),
    ("copy", "duplicate", "clone"),
    ("upload", "attach"),
    ("assign", "reassign", "allocate"),
    ("reply", "respond", "answer"),
    ("monitor", "watch", "track", "observe"),
    ("approve", "accept"),
    ("record", "capture"),
    ("remember", "memorize", "memory", "recall"),
    # things
    ("repository", "repo"),
    ("directory", "folder", "dir"),
    ("issue", "ticket", "bug"),
    ("kubernetes", "k8s", "kube"),
    ("database", "db"),
    ("configuration", "config", "settings", "setting", "preferences"),
    ("environment", "env"),
    ("documentation", "docs", "doc", "manual"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("message", "msg", "chat"),
    ("identifier", "id"),
    ("url", "link"),
    ("website", "site", "webpage"),
    ("image", "picture", "photo", "png", "jpg", "jpeg"),
    ("user", "person", "people", "member"),
    ("organization", "org", "organisation"),
    ("application", "app"),
    ("timezone", "tz"),
    ("coordinates", "latitude", "longitude", "lat", "lng", "lon"),
    ("elevation", "altitude", "height"),
    ("process", "pid", "program"),
    ("terminal", "shell", "console", "cli"),
    ("email", "mail"),
    ("calendar", "event", "appointment", "meeting"),
    ("label", "tag"),
    ("version", "release"),
    ("status", "state", "progress"),
    ("history", "changelog"),
    ("video", "recording", "screencast"),
    ("permission", "access", "restriction", "rights"),
    ("screenshot", "screen"),
)

#: Abbreviations that stand for several words.
ABBREVIATIONS: dict[str, str] = {
    "pr": "pull request",
    "prs": "pull requests",
    "mr": "merge request",
    "mrs": "merge requests",
    "ci": "continuous integration",
    "cwd": "current working directory",
    "dm": "direct message",
}

#: How much an expansion word counts next to a word of the request itself.
EXPANSION_WEIGHT = 0.5
