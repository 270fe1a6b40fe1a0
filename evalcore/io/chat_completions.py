"""One OpenAI-compatible chat completions call at a time: rate-limited, timed out, retried.

``POST {endpoint}/chat/completions`` with a JSON body (model, messages, temperature 0,
``max_tokens``) and, when a key is given, ``Authorization: Bearer <key>``. Only the
standard library (``urllib.request``, ``json``): nothing is installed or downloaded.

* **Rate.** A token bucket (:class:`TokenBucket`) of one token, refilled at ``rate`` per
  second: every HTTP request (a retry too) takes a token, so requests start at least
  ``1/rate`` seconds apart.
* **Timeout.** Each request has its own timeout (connect and read).
* **Retries.** A 429, a 5xx, a timeout or a refused/reset connection is retried after an
  exponential backoff (``backoff * 2**attempt`` seconds, at most ``max_backoff``; a
  numeric ``Retry-After`` of a 429/503 is honoured up to that cap), at most ``attempts``
  requests per call. Other answers are not retried: a 401/403/404 is raised as
  :class:`EndpointRefused` (the whole run should stop: every call would fail alike), any
  other 4xx or an answer that is not a chat completion is a :class:`CallFailed` with its
  reason.

A client may serve several threads at once (the bucket and the request count are
locked). The key is never part of a message, an exception or a return value.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message

#: HTTP statuses that are worth another attempt.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: HTTP statuses that make every further call pointless (a wrong key, URL or model).
FATAL_STATUSES = frozenset({401, 403, 404})
#: Bytes read of a reply at most (a chat completion is small).
MAX_REPLY_BYTES = 1_000_000


class CallFailed(Exception):
    """One call got no usable reply; ``reason`` is a short, key-free tag (e.g. ``http 500``)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class EndpointRefused(CallFailed):
    """The endpoint refused the call in a way every call would be refused (401/403/404)."""


class TokenBucket:
    """At most ``rate`` acquisitions per second, one at a time (a bucket of one token)."""

    def __init__(self, rate: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not rate > 0:
            raise ValueError(f"the rate must be positive, not {rate}")
        self.interval = 1.0 / rate
        self._clock, self._sleep = clock, sleep
        self._next = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Wait until a token is there, and take it."""
        with self._lock:
            now = self._clock()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            self._sleep(wait)


@dataclass
class ChatClient:
    """A chat completions endpoint with its model, key, limits and retry rule."""

    endpoint: str
    model: str
    key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    attempts: int = 5
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_tokens: int = 100
    bucket: TokenBucket | None = None
    sleep: Callable[[float], None] = time.sleep
    #: HTTP requests sent so far (first attempts and retries).
    requests: int = 0
    #: Set to make every call still running give up before its next attempt.
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    _count_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def url(self) -> str:
        return self.endpoint.rstrip("/") + "/chat/completions"

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The reply's text (``choices[0].message.content``), or :class:`CallFailed`."""
        body = json.dumps({"model": self.model, "messages": messages, "temperature": 0,
                           "max_tokens": self.max_tokens}).encode()
        last: CallFailed | None = None
        for attempt in range(max(1, self.attempts)):
            if attempt:
                self.sleep(self._delay(attempt, last))
            if self.bucket is not None:
                self.bucket.acquire()
            if self.cancelled.is_set():
                raise CallFailed("cancelled")
            with self._count_lock:  # calls may run in several threads
                self.requests += 1
            try:
                return _content(self._post(body))
            except _Retry as retry:
                last = retry
        assert last is not None
        raise CallFailed(last.reason, f"gave up after {max(1, self.attempts)} attempts")

    def _delay(self, attempt: int, last: CallFailed | None) -> float:
        delay = self.backoff * 2 ** (attempt - 1)
        if isinstance(last, _Retry) and last.retry_after is not None:
            delay = max(delay, last.retry_after)
        return min(delay, self.max_backoff)

    def _post(self, body: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                return reply.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as error:
            status = error.code
            error.close()
            if status in RETRY_STATUSES:
                raise _Retry(f"http {status}", _retry_after(error.headers)) from None
            if status in FATAL_STATUSES:
                raise EndpointRefused(f"http {status}", _fatal_hint(status)) from None
            raise CallFailed(f"http {status}") from None
        except TimeoutError:
            raise _Retry("timeout") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise _Retry("timeout") from None
            raise _Retry("connection failed") from None
        except (ConnectionError, http.client.HTTPException):
            raise _Retry("connection failed") from None


class _Retry(CallFailed):
    """A failure worth another attempt."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def _retry_after(headers: Message | None) -> float | None:
    value = None if headers is None else headers.get("Retry-After")
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: the backoff rule alone


def _fatal_hint(status: int) -> str:
    return {401: "the endpoint refused the key (check the key's environment variable)",
            403: "the endpoint refused access (check the key and the model)",
            404: "no such endpoint or model (check --endpoint, which ends before "
                 "/chat/completions, and --model)"}[status]


def _content(raw: bytes) -> str:
    """``choices[0].message.content`` of a chat completion, or :class:`CallFailed`."""
    if len(raw) > MAX_REPLY_BYTES:
        raise CallFailed("malformed reply", "reply too large")
    try:
        reply = json.loads(raw)
        content = reply["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise CallFailed("malformed reply", "not a chat completion") from None
    if not isinstance(content, str):
        raise CallFailed("malformed reply", "no text in the reply")
    return content
