"""Contains some shared types for properties"""

import datetime
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import IO, BinaryIO, Generic, Literal, Optional, TypeVar, Union


class Unset:
    def __bool__(self) -> Literal[False]:
        return False


UNSET: Unset = Unset()

# The types that `httpx.Client(files=)` can accept, copied from that library.
FileContent = Union[IO[bytes], bytes, str]
FileTypes = Union[
    # (filename, file (or bytes), content_type)
    tuple[Optional[str], FileContent, Optional[str]],
    # (filename, file (or bytes), content_type, headers)
    tuple[Optional[str], FileContent, Optional[str], Mapping[str, str]],
]
RequestFiles = list[tuple[str, FileTypes]]


@dataclass
class File:
    """Contains information for file uploads"""

    payload: BinaryIO
    file_name: Optional[str] = None
    mime_type: Optional[str] = None

    def to_tuple(self) -> FileTypes:
        """Return a tuple representation that httpx will accept for multipart/form-data"""
        return self.file_name, self.payload, self.mime_type


T = TypeVar("T")


@dataclass
class Response(Generic[T]):
    """A response from an endpoint"""

    status_code: HTTPStatus
    content: bytes
    headers: MutableMapping[str, str]
    parsed: Optional[T]


# An RFC 3339 date-time (or an ISO 8601 date): `T`, `t` or a space between date and time, seconds
# and fraction optional, the fraction of any length, `Z` or an offset with or without its colon.
_ISO_DATE_TIME = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[Tt ](?P<time>\d{2}:\d{2}(?::\d{2})?)(?:[.,](?P<fraction>\d+))?"
    r"(?P<offset>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?"
)


def isoparse(value: str) -> datetime.datetime:
    """The date-time (or date, at midnight) `value` says, aware when it has an offset.

    Named as python-dateutil's parser the generator calls: this one needs no dependency.
    `datetime.fromisoformat` before Python 3.11 takes neither `Z` nor a fraction of other than 3
    or 6 digits, so the value is first written in the form it takes: the fraction cut or padded to
    microseconds, `Z` as `+00:00`.
    """
    match = _ISO_DATE_TIME.fullmatch(value)
    if match is None:
        raise ValueError(f"not an ISO 8601 date or date-time: {value!r}")
    date, time, fraction, offset = match.group("date", "time", "fraction", "offset")
    if time is None:
        return datetime.datetime.fromisoformat(date)
    if fraction is not None:
        time += "." + fraction[:6].ljust(6, "0")
    if offset in ("Z", "z"):
        offset = "+00:00"
    elif offset is not None:
        offset = offset[:3] + ":" + (offset[3:].lstrip(":") or "00")
    return datetime.datetime.fromisoformat(f"{date}T{time}{offset or ''}")


__all__ = ["UNSET", "File", "FileTypes", "RequestFiles", "Response", "Unset", "isoparse"]
