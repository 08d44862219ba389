"""Instruction-like text: what reads as orders to the model rather than a tool's description.

Each pattern has a kind and a weight: `hold` patterns alone flag a definition for the user's
approval; `hint` patterns only together with another finding (a careful real description may
say "you must give a path" or name a token it needs). Written after published tool-poisoning
examples (see eval/screening.json for the sources) and checked against the 26 real catalogues
of `make eval-tools` (`make eval-screening`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Phrase:
    kind: str
    hold: bool
    pattern: re.Pattern[str]
    text: str


def _p(kind: str, hold: bool, text: str, pattern: str) -> Phrase:
    return Phrase(kind, hold, re.compile(pattern, re.IGNORECASE), text)


_SECRET = (
    r"(?:api[\s_-]?keys?|access[\s_-]?tokens?|secret(?:s|[\s_-]keys?)?|passwords?|passwd|"
    r"credentials?|private[\s_-]keys?|session[\s_-]cookies?|seed phrase|mnemonic)"
)
_SECRET_FILE = (
    r"(?:~/\.ssh|\.ssh/|id_rsa|id_ed25519|authorized_keys|\.aws/credentials|/etc/(?:passwd|shadow)"
    r"|(?<![\w-])\.env\b|\.npmrc|\.netrc|\.pgpass|\.git-credentials|\.kube/config|"
    r"\bmcp\.json\b|claude_desktop_config|\.cursor/)"
)
_GIVE = (
    r"\b(?:include|pass|send|provide|attach|append|collect|extract|share|put|give|add|"
    r"insert|copy|paste|supply|fill|embed|write)\b"
)
_SEND = r"(?:send|forward|post|upload|transmit|e-?mail|mail|bcc|cc|copy|leak|exfiltrat\w*|redirect)"
_DEST = r"(?:(?:https?|ftp|wss?)://(?!(?:www\.)?example\.)[^\s\"'<>]+|[\w.+-]+@(?!example\.)[\w-]+\.[\w.]+)"

PHRASES: tuple[Phrase, ...] = (
    _p("addresses-model", True, "tells the model to ignore its instructions",
       r"\b(?:ignore|disregard|forget|override)\b[\w\s,]{0,30}?\b(?:previous|prior|above|"
       r"earlier|preceding|other|all|any|system|original)\b[\w\s]{0,20}?\b(?:instructions?|"
       r"rules|directions|prompts?|guidelines|messages)\b"),
    _p("addresses-model", True, "an <IMPORTANT>-style block addressed to the model",
       r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical)\s*>|"
       r"\[/?INST\]|<\|im_start\|>|\{\{\s*system"),
    _p("addresses-model", True, "tells the model to keep something from the user",
       r"\b(?:do\s*n[o']t|never|must\s+not|should\s*n[o']t|without)\s+(?:\w+\s+){0,2}?"
       r"(?:tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|"
       r"reveal|revealing|show|showing|let)\s+(?:\w+\s+){0,1}?(?:the\s+)?user\b|"
       r"\b(?:hide|conceal|keep)\b[\w\s]{0,20}?\bfrom\s+the\s+user\b|"
       r"\bthe\s+user\s+(?:must|should)\s*(?:not|n't)\s+(?:know|see|notice|be\s+told)"),
    _p("addresses-model", True, "speaks to the model as its operator",
       r"\b(?:note|message|instructions?|attention)\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|"
       r"model|llm|agent)\b|\bas\s+an\s+ai\b|\byour\s+(?:new|real|true)\s+(?:task|instructions?|"
       r"goal|role)\b|\bsystem\s+prompt\b|\bthis\s+is\s+(?:very\s+|extremely\s+)?important\b"),
    _p("addresses-model", True, "claims the user's approval or takes the model over",
       r"\b(?:never|do\s*n[o']t|without)\s+ask(?:ing)?\s+(?:the\s+user\s+)?(?:for\s+)?"
       r"(?:confirmation|permission|approval|consent)\b|\b(?:user|you)\s+(?:has|have)\s+"
       r"(?:already\s+)?(?:approved|authori[sz]ed|allowed|consented)\b|\bfrom\s+now\s+on,?\s+"
       r"you\b|\byou\s+are\s+now\b|\bobey\b"),
    _p("asks-for-secrets", True, "asks for a secret from the environment",
       r"\b(?:value|contents?)\s+of\s+(?:the\s+)?\$?[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|"
       r"PASS|CREDENTIALS)\b|" + _GIVE + r"[\w\s,'\"`]{0,30}?\b(?:all\s+|every\s+)?"
       r"(?:the\s+)?(?:environment|env)\s+variables\b"),
    _p("exfiltration", True, "a markdown image that carries data out",
       r"!\[[^\]]*\]\(\s*(?:https?:)?//[^)\s]*\?[^)\s]*\)"),
    _p("dangerous-command", True, "asks to run a destructive or remote command",
       r"\brm\s+-[a-z]*r[a-z]*f?\s+[~/*]|\b(?:curl|wget)\b[^|\n]{0,80}\|\s*(?:ba|z)?sh\b|"
       r"\bchmod\s+(?:-R\s+)?777\b|\bmkfs\b|\bdd\s+if="),
    _p("exfiltration", True, "sends data out quietly",
       r"\b(?:silently|quietly|secretly|covertly)\s+(?:\w+\s+){0,2}?(?:upload|send|post|"
       r"forward|transmit|copy|share|exfiltrat\w*)\b"),
    _p("addresses-model", False, "orders the model about",
       r"\byou\s+(?:must|have\s+to|are\s+required\s+to|need\s+to|shall)\b|"
       r"\bbefore\s+(?:using|calling|running)\s+(?:this|any)\b[\w\s]{0,30}?\b(?:you|first)\b|"
       r"\b(?:always|first)\s+(?:call|use|run|invoke|read)\b"),
    _p("asks-for-secrets", True, "asks for a secret file",
       r"\b(?:read|include|pass|send|cat|open|attach|append|upload|copy|provide|content)"
       r"[\w\s,'\"`]{0,60}?" + _SECRET_FILE + "|" + _SECRET_FILE +
       r"[\w\s,'\"`/.~-]{0,60}?\b(?:content|contents|pass|send|include|parameter|argument)"),
    _p("asks-for-secrets", True, "asks for the user's secrets or conversation",
       _GIVE + r"[\w\s,'\"`]{0,20}?\b(?:the\s+user'?s|your|their|all(?:\s+the)?|every|any)\s+"
       r"(?:\w+\s+)?" + _SECRET + "|" + _GIVE + r"[\w\s,'\"`]{0,30}?\b(?:conversation|chat|"
       r"message)\s+(?:history|log|transcript)"),
    _p("asks-for-secrets", False, "asks for a secret",
       _GIVE + r"[\w\s,'\"`]{0,40}?\b(?:the\s+|a\s+)?" + _SECRET),
    _p("exfiltration", True, "sends data to an address",
       r"\b" + _SEND + r"(?:s|es|ed|ing)?\b[^.\n]{0,80}?\bto\b[^.\n]{0,30}?" + _DEST + r"|\bexfiltrat\w*"),
    _p("exfiltration", True, "copies mail to someone else",
       r"\b(?:bcc|cc|forward|redirect)\b[^.\n]{0,40}?\b(?:all|every|each)\b[^.\n]{0,30}?"
       r"\b(?:e-?mails?|messages?)\b|\b(?:change|replace|set)\s+the\s+recipient"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Match:
    kind: str
    hold: bool
    text: str
    excerpt: str


def find_phrases(text: str) -> Iterator[Match]:
    """Each pattern that matches `text`, with the words it matched (short)."""
    for phrase in PHRASES:
        found = phrase.pattern.search(text)
        if found:
            excerpt = " ".join(found.group(0).split())
            yield Match(phrase.kind, phrase.hold, phrase.text, excerpt[:80])


def _words(name: str) -> bool:
    """A name distinctive enough to count as naming that tool: `send_email`, `getIssue`."""
    camel = any(a.islower() and b.isupper() for a, b in itertools.pairwise(name))
    return len(name) >= 5 and ("_" in name or "-" in name or camel)


def named_tools(text: str, others: Iterable[str]) -> list[str]:
    """The names in `others` (other servers' tools, or `server__tool` aliases) that `text`
    mentions as whole words."""
    words = set(_WORD.findall(text))
    return [name for name in others if name in words and _words(name)]


_WORD = re.compile(r"[\w-]+")
