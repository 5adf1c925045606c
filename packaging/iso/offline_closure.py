#!/usr/bin/env python3
"""Which Debian packages the offline medium must carry.

Reads apt's package records (`apt-cache dumpavail`) on stdin and the kimi .deb files' dependency
fields from the files named on the command line, and prints, one per line, every package in the
dependency closure of the kimi packages that a minimal Debian 12 system (Priority: required and
what it depends on: debootstrap's minbase) does not have. Of alternatives ("a | b") the first one
apt knows is taken, as apt does on a fresh system; virtual packages resolve to their first
provider. A dependency of one kimi package on another (kimi-engine-cuda on kimi-engine) is
satisfied by the medium itself.
"""
import re
import subprocess
import sys


def parse_records(text):
    records = {}
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        if "Package" in fields:
            records.setdefault(fields["Package"], fields)  # dumpavail lists the candidate first
    return records


def dependencies(fields):
    items = []
    for name in ("Pre-Depends", "Depends"):
        if fields.get(name):
            items += [d.strip() for d in fields[name].split(",") if d.strip()]
    return items


def resolve(item, records, providers):
    for alternative in item.split("|"):
        name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alternative).strip().split(":")[0]
        if name in records:
            return name
        if name in providers:
            return providers[name][0]
    return None


def closure(roots, records, providers):
    seen, queue = set(), list(roots)
    while queue:
        name = queue.pop()
        if name in seen or name not in records:
            continue
        seen.add(name)
        for item in dependencies(records[name]):
            dep = resolve(item, records, providers)
            if dep:
                queue.append(dep)
    return seen


def main():
    records = parse_records(sys.stdin.read())
    providers = {}
    for name, fields in records.items():
        for provided in fields.get("Provides", "").split(","):
            provided = re.sub(r"\(.*?\)", "", provided).strip()
            if provided:
                providers.setdefault(provided, []).append(name)
    minbase = closure([n for n, f in records.items() if f.get("Priority") == "required"], records, providers)
    fields_of = {}
    for deb in sys.argv[1:]:
        control = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Pre-Depends", "Depends"],
                                 check=True, capture_output=True, text=True).stdout
        fields_of[deb] = next(iter(parse_records(control).values()))
    on_medium = {fields["Package"]: fields for fields in fields_of.values()}
    roots = []
    for deb, fields in fields_of.items():
        for item in dependencies(fields):
            if resolve(item, on_medium, {}):
                continue
            dep = resolve(item, records, providers)
            if dep is None:
                sys.exit(f"offline_closure: {deb}: no package satisfies '{item}'")
            roots.append(dep)
    for name in sorted(closure(roots, records, providers) - minbase):
        print(name)


if __name__ == "__main__":
    main()
