"""JSON request bodies, decoded strictly: an object that names a key twice is refused (422)
instead of silently keeping the last value, which would let a body say one thing to a
proxy or log that reads the first and another to the service. REST routers that take
JSON bodies use `StrictJSONRoute`; the GraphQL router decodes with `strict_json` too."""
from __future__ import annotations

import json
from typing import Any, Callable, Coroutine

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute


class DuplicateKey(HTTPException):
    def __init__(self, key: str) -> None:
        super().__init__(status_code=422, detail=f"the JSON body names the key '{key[:60]}' more than once; send each "
                                                 "key once")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


def strict_json(data: str | bytes) -> Any:
    return json.loads(data, object_pairs_hook=_unique)


class StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = strict_json(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict
