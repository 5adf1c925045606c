#!/usr/bin/python3
"""Validates structured-output walks with an independent JSON Schema validator.

Reads JSON lines {"where": ..., "schema": "<schema JSON text>", "output": "<generated text>"}
and checks that every output parses as JSON and validates against its schema under Draft
2020-12 (Debian's python3-jsonschema), formats included. Exit status: 0 all valid, 1 some
invalid, 77 when python3-jsonschema is not installed.
"""
import json
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)


def main(path):
    checked = 0
    failures = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            schema = json.loads(record["schema"])
            checked += 1
            try:
                value = json.loads(record["output"])
            except ValueError as error:
                failures.append(f"{record['where']}: not JSON ({error}): {record['output'][:200]!r}")
                continue
            validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            errors = list(validator.iter_errors(value))
            if errors:
                failures.append(f"{record['where']}: {errors[0].message[:200]} in {record['output'][:200]!r}")
    for failure in failures[:20]:
        print(failure)
    print(f"{checked} outputs checked with jsonschema {jsonschema.__name__} Draft 2020-12: "
          f"{checked - len(failures)} valid, {len(failures)} invalid")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
