"""General software vocabulary for query expansion in `search_tools`.

People ask for a "folder", a "ticket" or a "PR"; tool definitions say "directory", "issue" and
"pull request". Lexical ranking cannot see that these are the same thing, so a request's words
are expanded with the other words of their group below (scored at `EXPANSION_WEIGHT` of a word
the user wrote).

The rule for a group: an action verb of the CRUD kind that APIs of every field use, or a
standard abbreviation or spelling of a software noun. Nothing from the domain of one server
(maps, time zones, memory graphs, browsers, processes): the embedding ranker (`embeddings`)
covers meaning in general, and a list grown from one evaluation's misses would only fit that
evaluation. An earlier, longer list was cut to this rule; `make eval-tools` prints BM25 with
and without the groups.
"""

from __future__ import annotations

#: Words that mean the same action or thing in tool descriptions (each group is symmetric).
SYNONYMS: tuple[tuple[str, ...], ...] = (
    # verbs
    ("create", "add", "new", "make", "insert"),
    ("get", "fetch", "retrieve", "read", "show", "view", "display"),
    ("list", "enumerate", "browse"),
    ("update", "edit", "modify", "change", "patch"),
    ("delete", "remove", "erase", "destroy", "drop", "discard", "purge"),
    ("search", "find", "lookup", "query", "locate"),
    ("run", "execute", "exec", "launch", "invoke"),
    ("stop", "kill", "terminate", "halt", "abort", "cancel"),
    ("send", "post", "publish"),
    ("move", "rename", "relocate"),
    ("copy", "duplicate", "clone"),
    ("upload", "attach"),
    ("assign", "reassign"),
    ("reply", "respond", "answer"),
    # abbreviations and spellings of software nouns
    ("repository", "repo"),
    ("directory", "folder", "dir"),
    ("issue", "ticket", "bug"),
    ("kubernetes", "k8s", "kube"),
    ("database", "db"),
    ("configuration", "config", "settings", "setting", "preferences"),
    ("environment", "env"),
    ("documentation", "docs", "doc"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("message", "msg"),
    ("identifier", "id"),
    ("url", "link"),
    ("website", "site", "webpage"),
    ("organization", "org", "organisation"),
    ("application", "app"),
    ("email", "mail"),
    ("label", "tag"),
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
