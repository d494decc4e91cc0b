"""The webhook transport (:class:`~agentmem.webhook_ports.WebhookTransport`) over the standard
library's HTTP client: no dependency, no redirects followed (a 3xx is a failed delivery, so a
receiver cannot bounce a signed body elsewhere)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Mapping


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class UrllibTransport:
    def __init__(self) -> None:
        self._opener = urllib.request.build_opener(_NoRedirect)

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
        try:
            with self._opener.open(request, timeout=timeout_s) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except urllib.error.URLError as exc:
            raise ConnectionError(str(exc.reason)) from exc
