"""Server-Sent Events read from lines, as the HTML standard's event stream parsing says."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass
class Message:
    event: str = "message"
    data: str | None = None
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Fed one line at a time (without its end); gives a message at each blank line."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, line: str) -> Message | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: the keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> Message | None:
        message = None
        if self._data or self._retry is not None or self._event is not None:
            message = Message(
                event=self._event or "message",
                data="\n".join(self._data) if self._data else None,
                id=self._id,
                retry=self._retry,
            )
        self._data, self._event, self._retry = [], None, None
        return message


def messages(lines: Iterable[str]) -> Iterator[Message]:
    parser = SseParser()
    for line in lines:
        message = parser.feed(line.rstrip("\r\n"))
        if message is not None:
            yield message
