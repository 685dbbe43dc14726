"""What ``/sparql`` checks before a query or update runs, each step linear and run off the event loop.

- :func:`body_params` decodes a POST body (UTF-8, else 400) into the protocol's
  parameters (form fields, or the whole body for ``application/sparql-query``
  and ``application/sparql-update``);
- :func:`check` reads the text with :func:`diagkg.kg.sparql_scan.scan` (never a
  pattern over the text): a query sent as an update or the other way round is
  400, a text the scanner cannot read is 400, and a text that makes the server
  fetch (``SERVICE``, ``LOAD``) needs the token (403) and a target on a host
  named with ``--allow-remote`` (403, naming the host).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import HTTPException

from ..errors import QueryError
from ..kg.sparql_scan import Remote, Scan, host_of, scan

FORM = "application/x-www-form-urlencoded"
QUERY = "application/sparql-query"
UPDATE = "application/sparql-update"
MAX_FIELDS = 64          # form fields of one SPARQL request (a query and a few graph IRIs)


def body_params(ctype: str, raw: bytes) -> dict[str, list[str]]:
    """The SPARQL protocol parameters a POST body carries (400 when it is not UTF-8)."""
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, f"the request body is not UTF-8 text (byte {exc.start})") from None
    if ctype == QUERY:
        return {"query": [body]}
    if ctype == UPDATE:
        return {"update": [body]}
    try:
        fields = parse_qs(body, keep_blank_values=True, max_num_fields=MAX_FIELDS, errors="strict")
    except (ValueError, UnicodeDecodeError) as exc:
        raise HTTPException(400, f"the form cannot be read: {exc}") from None
    return fields


def remote_allowed(iri: str | None, allowed: tuple[str, ...]) -> bool:
    """Is ``iri`` an http(s) IRI on a host of ``allowed`` (``host`` matches any port, ``host:port`` one)?"""
    host = host_of(iri) if iri else None
    if host is None:
        return False
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    for entry in allowed:
        entry = entry.lower()
        if entry == host or entry == name or entry.strip("[]") == name.strip("[]"):
            return True
    return False


def _what(r: Remote) -> str:
    where = f" (line {r.line}, column {r.column})"
    return f"{r.keyword} <{r.iri}>{where}" if r.iri else f"{r.keyword}{where}, whose target cannot be told from the text"


def check(text: str, *, update: bool, token: bool, allowed: tuple[str, ...]) -> Scan:
    """Read ``text`` and refuse it (HTTPException) unless it may run as asked."""
    try:
        found = scan(text)
    except QueryError as exc:
        raise HTTPException(400, f"malformed {'update' if update else 'query'}: {exc}") from None
    if update and found.form == "query":
        raise HTTPException(400, "this is a query, not an update: send it as `query`")
    if not update and found.form == "update":
        raise HTTPException(400, "this is an update: POST it as `update` (form) or application/sparql-update, "
                                 "with the token")
    remotes = [r for r in found.remotes if update or r.keyword == "SERVICE"]
    if not remotes:
        return found
    if not token:
        raise HTTPException(403, f"{_what(remotes[0])} makes this server fetch from another server "
                                 "(a federated query); it needs the token")
    for r in remotes:
        if not remote_allowed(r.iri, allowed):
            host = host_of(r.iri) if r.iri else None
            hint = (f"start the server with --allow-remote {host.rsplit(':', 1)[0] if not host.endswith(']') else host}"
                    if host else "name an http(s) IRI on a host allowed with --allow-remote")
            raise HTTPException(403, f"{_what(r)}: this server fetches only from the hosts it was told to "
                                     f"({', '.join(allowed) or 'none'}); {hint}")
    return found
