"""Files of Kubernetes objects as people write them and kubectl prints them.

``read_objects(text, name)`` gives every object of a YAML or JSON file with where it is
(``cluster.yaml line 12 items[3]``): ``---`` streams, Lists (typed ones too: ``DeploymentList``
items get their kind), JSON values one after the other, and several outputs appended without
a separator (``kubectl get nodes -o yaml > f; kubectl get pods -A -o yaml >> f``: each starts
with a top-level ``apiVersion:``, which YAML alone would merge key by key into one document).
``documents(text, name)`` gives the documents themselves. YAML 1.1 timestamps stay strings
(the API server sees JSON). Every problem is a ``ManifestError`` naming the file and the line
or item: not YAML or JSON (a truncated file), a List without kind, an object without
apiVersion, kind or metadata.name, an empty file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from kvert.api.types import Obj


class ManifestError(ValueError):
    """A file of objects kvert cannot read; the message names the file and the line or item."""


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe YAML without YAML 1.1 timestamps: an unquoted time stays the string the API
    server would see (JSON has no timestamp type)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()}

_TOP_API_VERSION = re.compile(r"""^(apiVersion|"apiVersion"|'apiVersion')[ \t]*:""")
_DOCUMENT_MARK = re.compile(r"^(---|\.\.\.)(\s|$)")


@dataclass
class _Doc:
    data: Any
    line: int | None                 # 1-based line of the document's start
    item_lines: list[int] | None     # 1-based line of each entry of its ``items``


def _chunks(text: str) -> list[tuple[int, str]]:
    """``text`` cut before every top-level ``apiVersion:`` line of a document that already
    had one (outputs appended without ``---``), as (first line's 0-based index, text)."""
    lines = text.splitlines(keepends=True)
    out, start, seen = [], 0, False
    for i, line in enumerate(lines):
        if _DOCUMENT_MARK.match(line):
            seen = False
        elif _TOP_API_VERSION.match(line):
            if seen:
                out.append((start, "".join(lines[start:i])))
                start = i
            seen = True
    out.append((start, "".join(lines[start:])))
    return out


def _yaml_docs(text: str, name: str) -> list[_Doc]:
    docs: list[_Doc] = []
    last = max(1, len(text.splitlines()))
    for offset, chunk in _chunks(text):
        loader = _Loader(chunk)
        try:
            while loader.check_node():
                node = loader.get_node()
                data = loader.construct_document(node)
                item_lines = None
                if isinstance(node, yaml.MappingNode):
                    for key, value in node.value:
                        if key.value == "items" and isinstance(value, yaml.SequenceNode):
                            item_lines = [n.start_mark.line + 1 + offset for n in value.value]
                docs.append(_Doc(data, node.start_mark.line + 1 + offset, item_lines))
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
            problem = getattr(e, "problem", None) or str(e)
            context, begun = getattr(e, "context", None), getattr(e, "context_mark", None)
            line = min(mark.line + 1 + offset, last) if mark else None   # not past the end
            where = f"{name} line {line}" if line else name
            detail = f"{context}: {problem}" if context else problem
            if begun is not None and line and begun.line + 1 + offset != line:
                detail += f"; it began at line {begun.line + 1 + offset}"
            raise ManifestError(f"{where}: not valid YAML ({detail}); is the file truncated?") \
                from None
        finally:
            loader.dispose()
    return docs


def _json_docs(text: str, name: str) -> list[_Doc]:
    """One JSON value, or several appended (``kubectl get -o json >> f``)."""
    decoder, i = json.JSONDecoder(), 0
    docs: list[_Doc] = []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        try:
            data, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise ManifestError(f"{name} line {e.lineno}: not valid JSON ({e.msg}); is the file "
                                f"truncated?") from None
        docs.append(_Doc(data, None, None))


def documents(text: str, name: str) -> list[_Doc]:
    if text.lstrip()[:1] in ("{", "["):
        try:
            return _json_docs(text, name)
        except ManifestError as json_error:
            try:
                return _yaml_docs(text, name)    # YAML flow style
            except ManifestError:
                raise json_error from None
    return _yaml_docs(text, name)


def read_objects(text: str, name: str) -> Iterator[tuple[Obj, str]]:
    """(object, where it is) for every object of a file: Lists flattened, items given the
    kind and apiVersion of a typed List when they lack them."""
    docs = [d for d in documents(text, name) if d.data is not None]
    if not docs:
        raise ManifestError(f"{name}: empty (no Kubernetes objects)")
    for d, doc in enumerate(docs):
        where = name + (f" line {doc.line}" if doc.line else "") + \
            (f" (document {d + 1})" if len(docs) > 1 and not doc.line else "")
        data = doc.data
        if not isinstance(data, dict):
            raise ManifestError(f"{where}: expected a Kubernetes object or List (a mapping), "
                                f"found a {type(data).__name__}")
        kind = data.get("kind")
        list_kind = kind if isinstance(kind, str) and kind.endswith("List") and "items" in data else None
        if not kind and "items" in data:
            raise ManifestError(f"{where}: a List without kind (kubectl prints 'kind: List' "
                                f"after the items: is the file truncated?)")
        if list_kind is None:
            yield _checked(data, where), where
            continue
        items = data.get("items") or []
        if not isinstance(items, list):
            raise ManifestError(f"{where}: items must be a list")
        typed = list_kind[:-4] if list_kind != "List" else ""
        for i, item in enumerate(items):
            line = doc.item_lines[i] if doc.item_lines and i < len(doc.item_lines) else None
            at = name + (f" line {line}" if line else "") + \
                (f" (document {d + 1})" if len(docs) > 1 and not line else "") + f" items[{i}]"
            if isinstance(item, dict) and typed:
                if not item.get("kind"):
                    item = {"kind": typed, **item}
                if not item.get("apiVersion") and data.get("apiVersion"):
                    item = {"apiVersion": data["apiVersion"], **item}
            yield _checked(item, at), at


def _checked(obj: Any, where: str) -> Obj:
    if not isinstance(obj, dict):
        raise ManifestError(f"{where}: expected a Kubernetes object (a mapping), found a "
                            f"{type(obj).__name__}")
    missing = [k for k in ("kind", "apiVersion") if not isinstance(obj.get(k), str) or not obj[k]]
    if missing:
        raise ManifestError(f"{where}: {' and '.join(missing)} required (every object needs "
                            f"its apiVersion and kind)")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise ManifestError(f"{where}: {obj['kind']} has no metadata.name")
    return obj


__all__ = ["ManifestError", "documents", "read_objects"]
