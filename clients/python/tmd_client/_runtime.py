# Generated from the OpenAPI document by scripts/clients.ts (npm run clients): do not edit.
"""HTTP for the generated client, with the standard library only: retries that honour Retry-After, pages
that follow meta.next_cursor, and problem+json answers raised as ProblemError."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

DEFAULT_RETRIES = 2
DEFAULT_MAX_DELAY = 30.0
DEFAULT_BASE_DELAY = 0.5
# Methods a network error or a 503 may be retried on without an Idempotency-Key.
_REPEATABLE = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


class ProblemError(Exception):
    """An error answer of the API (RFC 9457 problem+json): compare ``code`` with ``Code``'s constants.

    ``code`` is ``"unexpected_response"`` when the answer was an error but no problem (a proxy's page).
    """

    def __init__(self, status: int, problem: Mapping[str, Any], reason: str = "") -> None:
        self.status = status
        self.problem = dict(problem)
        self.code: str = self.problem.get("code") or "unexpected_response"
        self.title: str = self.problem.get("title") or reason or f"HTTP {status}"
        self.detail: str = self.problem.get("detail") or ""
        self.type: str | None = self.problem.get("type")
        self.request_id: str | None = self.problem.get("request_id")
        # 429 and 503: seconds until a retry can succeed.
        self.retry_after: int | None = self.problem.get("retry_after")
        super().__init__(f"{status} {self.code}: {self.detail or self.title}")


def _data_frame(rows: list[dict[str, Any]], columns: list[str] | None) -> Any:
    try:
        import pandas
    except ImportError as error:
        raise ImportError(
            "to_pandas() needs pandas, which is not installed: pip install pandas "
            "(the rest of tmd_client needs only the standard library)"
        ) from error
    return pandas.DataFrame.from_records(rows, columns=columns or None)


@dataclass
class Page:
    """One page of a paged answer: its rows (``data``), its ``meta`` and the response's headers (by
    lower-case name: ``page.headers["x-token-cost"]``)."""

    data: list[dict[str, Any]]
    meta: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def next_cursor(self) -> str | None:
        return self.meta.get("next_cursor")

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame, columns in the order of ``meta.fields`` (needs pandas)."""
        return _data_frame(self.data, self.meta.get("fields"))


class Pages:
    """The pages from a first request on, following ``meta.next_cursor`` until it is null.

    Iterating sends one request per page, and on a dataset each is a metered read.
    """

    def __init__(self, fetch: Callable[[str | None], Page], cursor: str | None = None) -> None:
        self._fetch = fetch
        self._cursor = cursor

    def __iter__(self) -> Iterator[Page]:
        cursor = self._cursor
        while True:
            page = self._fetch(cursor)
            yield page
            cursor = page.next_cursor
            if not cursor:
                return

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row of every page, one by one."""
        for page in self:
            yield from page.data

    def to_pandas(self) -> Any:
        """Every page read and its rows in one pandas DataFrame (needs pandas)."""
        rows: list[dict[str, Any]] = []
        columns: list[str] | None = None
        for page in self:
            columns = columns or page.meta.get("fields")
            rows.extend(page.data)
        return _data_frame(rows, columns)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After in seconds: delay-seconds or an HTTP date (RFC 9110 section 10.2.3)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def _query_pairs(query: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Form style, exploded: a list repeats its name, an object (the read's filters) spreads out."""
    pairs: list[tuple[str, str]] = []

    def add(name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool):
            pairs.append((name, "true" if value else "false"))
        elif isinstance(value, (list, tuple)):
            for item in value:
                add(name, item)
        else:
            pairs.append((name, str(value)))

    for name, value in query.items():
        if isinstance(value, Mapping):
            for member, member_value in value.items():
                add(member, member_value)
        else:
            add(name, value)
    return pairs


def _decode(headers: Any, payload: bytes) -> Any:
    if not payload:
        return None
    text = payload.decode("utf-8")
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip()
    if content_type == "application/json" or content_type.endswith("+json"):
        return json.loads(text)
    return text


def _problem(status: int, headers: Any, payload: bytes, reason: str) -> ProblemError:
    try:
        body = _decode(headers, payload)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return ProblemError(status, body, reason)
    detail = body[:500] if isinstance(body, str) else ""
    return ProblemError(status, {"detail": detail} if detail else {}, reason)


class Transport:
    """Sends requests to the service with a key (``Authorization: Bearer``) and retries as the API asks.

    A 429 is refused before anything is done, so it is retried whatever the method; a 503 or a network
    error only when the request can be repeated (a safe method, or an Idempotency-Key, sent unchanged on
    every retry). A Retry-After longer than ``max_delay`` seconds (a daily limit) is raised at once.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        max_delay: float = DEFAULT_MAX_DELAY,
        base_delay: float = DEFAULT_BASE_DELAY,
        timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retries = retries
        self.max_delay = max_delay
        self.base_delay = base_delay
        self.timeout = timeout
        self.headers = dict(headers or {})
        self._sleep = sleep

    def _backoff(self, attempt: int) -> float:
        return min(self.base_delay * 2**attempt * random.uniform(0.5, 1.0), self.max_delay)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> tuple[Any, dict[str, str]]:
        """One call: its body (JSON as dicts and lists, anything else as text) and headers (lower-case)."""
        pairs = _query_pairs(query or {})
        url = self.base_url + path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")
        sent = dict(self.headers)
        if self.api_key:
            sent["Authorization"] = f"Bearer {self.api_key}"
        sent.update({name: value for name, value in (headers or {}).items() if value is not None})
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        repeatable = method in _REPEATABLE or "Idempotency-Key" in sent
        attempt = 0
        while True:
            last = attempt >= self.retries
            request = urllib.request.Request(url, data=data, headers=sent, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer = {name.lower(): value for name, value in response.headers.items()}
                    return _decode(response.headers, response.read()), answer
            except urllib.error.HTTPError as error:
                payload = error.read()
                error.close()
                retryable = error.code == 429 or (error.code == 503 and repeatable)
                delay = retry_after_seconds(error.headers.get("Retry-After"))
                if delay is None:
                    delay = self._backoff(attempt)
                if last or not retryable or delay > self.max_delay:
                    raise _problem(error.code, error.headers, payload, str(error.reason)) from None
            except (OSError, http.client.HTTPException):
                if last or not repeatable:
                    raise
                delay = self._backoff(attempt)
            self._sleep(delay)
            attempt += 1

    @staticmethod
    def _path(template: str, **params: Any) -> str:
        quoted = {name: urllib.parse.quote(str(value), safe="") for name, value in params.items()}
        return template.format(**quoted)

    @staticmethod
    def _page(answer: tuple[Any, dict[str, str]]) -> Any:
        body, headers = answer
        if isinstance(body, dict) and isinstance(body.get("data"), list):
            if isinstance(body.get("meta"), dict):
                return Page(data=body["data"], meta=body["meta"], headers=headers)
        return body
