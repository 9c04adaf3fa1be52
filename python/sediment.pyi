"""Read a Sediment store: rows by SHA-1, wayback capture queries, prefix scans."""

import os
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Tuple, Union

Key = Union[bytes, str]
"""20 raw bytes, or base32 / hex / `sha1:BASE32` as str or ASCII bytes."""

class SedimentError(Exception):
    """An error of the store or of a query, with the message the CLI prints."""

class Rows(Iterator[Tuple[bytes, dict[str, dict[str, Any]]]]):
    def __next__(self) -> Tuple[bytes, dict[str, dict[str, Any]]]: ...
    def close(self) -> None: ...

class Captures(Iterator[dict[str, str]]):
    def __next__(self) -> dict[str, str]: ...
    def close(self) -> None: ...

class Store:
    """The newest published version of a store, opened read-only (open again for a newer one)."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def version(self) -> Optional[int]: ...
    def row(self, key: Key) -> Optional[dict[str, dict[str, Any]]]:
        """`{family: {qualifier: value}}`, values as `sediment get` shows them; None if absent."""
    def scan(self, prefix: Optional[bytes] = None, limit: Optional[int] = None) -> Rows:
        """`(key, row)` of the rows whose raw key starts with `prefix`, in key order."""
    def captures(
        self,
        url: str,
        match_type: Optional[str] = None,
        from_ts: Optional[str] = None,
        to: Optional[str] = None,
        limit: Optional[int] = None,
        *,
        filter: Union[str, Sequence[str], None] = None,
        collapse: Union[str, Sequence[str], None] = None,
        closest: Optional[str] = None,
        reverse: bool = False,
        fields: Union[str, Sequence[str], None] = None,
    ) -> Captures:
        """The captures `sediment captures --url` lists, as dicts of the CDX fields."""

def open(path: Union[str, os.PathLike[str]]) -> Store:
    """Opens the newest published version of the store at `path` for reading."""
