"""A strict parser for the Prometheus text exposition format 0.0.4, for tests.

Raises ValueError on anything a scraper could misread: a sample before its TYPE, a TYPE or
HELP given twice, bad names, bad label syntax or escapes, unparsable values, duplicate
series, histogram buckets that are not cumulative or lack +Inf, _count different from the
+Inf bucket, a missing _sum, or text not ending in a newline.
"""
import math
import re

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def _parse_value(text):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        raise ValueError("bad value %r" % text)
    return float(text)


def _parse_labels(text, lineno):
    labels = {}
    i = 0
    while i < len(text):
        m = re.compile(LABEL + r'="').match(text, i)
        if not m:
            raise ValueError("line %d: bad label at %r" % (lineno, text[i:]))
        name = text[m.start():m.end() - 2]
        i = m.end()
        value = ""
        while True:
            if i >= len(text):
                raise ValueError("line %d: unterminated label value" % lineno)
            c = text[i]
            if c == "\\":
                nxt = text[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise ValueError("line %d: bad escape \\%s" % (lineno, nxt))
                value += {"\\": "\\", '"': '"', "n": "\n"}[nxt]
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise ValueError("line %d: raw newline in label value" % lineno)
            else:
                value += c
                i += 1
        if name in labels:
            raise ValueError("line %d: label %s repeated" % (lineno, name))
        labels[name] = value
        if i < len(text):
            if text[i] != ",":
                raise ValueError("line %d: expected ',' between labels" % lineno)
            i += 1
    return labels


def _family_of(sample_name, types):
    if sample_name in types:
        return sample_name
    for suffix in ("_bucket", "_sum", "_count"):
        if sample_name.endswith(suffix):
            base = sample_name[: -len(suffix)]
            if types.get(base) in ("histogram", "summary"):
                return base
    return None


def parse(text):
    """Returns {family: {"type": t, "help": h, "samples": [(name, labels, value)]}}."""
    if text and not text.endswith("\n"):
        raise ValueError("exposition does not end with a newline")
    families = {}
    types = {}
    seen_series = set()
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line == "":
            continue
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (" + NAME + r") (.*)", line)
            if not m:
                if line.startswith("# HELP") or line.startswith("# TYPE"):
                    raise ValueError("line %d: bad %r" % (lineno, line))
                continue  # a plain comment
            kind, name, rest = m.groups()
            fam = families.setdefault(name, {"type": None, "help": None, "samples": []})
            if kind == "TYPE":
                if fam["type"] is not None:
                    raise ValueError("line %d: second TYPE for %s" % (lineno, name))
                if fam["samples"]:
                    raise ValueError("line %d: TYPE for %s after its samples" % (lineno, name))
                if rest not in TYPES:
                    raise ValueError("line %d: unknown type %r" % (lineno, rest))
                fam["type"] = rest
                types[name] = rest
            else:
                if fam["help"] is not None:
                    raise ValueError("line %d: second HELP for %s" % (lineno, name))
                fam["help"] = rest
            continue
        m = re.fullmatch(r"(" + NAME + r")(\{(.*)\})? (\S+)( -?\d+)?", line)
        if not m:
            raise ValueError("line %d: bad sample %r" % (lineno, line))
        sample_name, _, label_text, value_text, _ = m.groups()
        labels = _parse_labels(label_text or "", lineno)
        value = _parse_value(value_text)
        family = _family_of(sample_name, types)
        if family is None:
            raise ValueError("line %d: sample %s has no TYPE before it" % (lineno, sample_name))
        key = (sample_name, tuple(sorted(labels.items())))
        if key in seen_series:
            raise ValueError("line %d: duplicate series %s%s" % (lineno, sample_name, labels))
        seen_series.add(key)
        families[family]["samples"].append((sample_name, labels, value))
    for name, fam in families.items():
        if fam["type"] == "histogram":
            _check_histogram(name, fam["samples"])
    return families


def _check_histogram(name, samples):
    groups = {}
    for sample_name, labels, value in samples:
        rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        g = groups.setdefault(rest, {"buckets": [], "sum": None, "count": None})
        if sample_name == name + "_bucket":
            if "le" not in labels:
                raise ValueError("%s: bucket without le" % name)
            g["buckets"].append((_parse_value(labels["le"]), value))
        elif sample_name == name + "_sum":
            g["sum"] = value
        elif sample_name == name + "_count":
            g["count"] = value
        else:
            raise ValueError("%s: unexpected sample %s" % (name, sample_name))
    for rest, g in groups.items():
        buckets = g["buckets"]
        if not buckets or buckets[-1][0] != math.inf:
            raise ValueError("%s%s: no +Inf bucket last" % (name, rest))
        bounds = [b for b, _ in buckets]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ValueError("%s%s: bucket bounds not increasing" % (name, rest))
        counts = [c for _, c in buckets]
        if any(b < a for a, b in zip(counts, counts[1:])):
            raise ValueError("%s%s: buckets not cumulative" % (name, rest))
        if g["sum"] is None or g["count"] is None:
            raise ValueError("%s%s: missing _sum or _count" % (name, rest))
        if g["count"] != counts[-1]:
            raise ValueError("%s%s: _count %s != +Inf bucket %s" % (name, rest, g["count"], counts[-1]))
