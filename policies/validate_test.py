"""Validates the shipped policies and the invalid test documents with Debian's
python3-jsonschema against policies/schema.json.

The daemon validates policies with its own C++ code (appliance/policy/policy_validator.cc);
its test reads the same documents (testdata/invalid/*.json) and must report the same JSON
pointers for the schema's errors, so the schema file and the C++ validator cannot drift
apart unnoticed. Checks that JSON Schema cannot state ("semantic_errors") are the C++
side's alone; here those documents must be schema-valid.
"""
import glob
import json
import os
import sys
import unittest

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pointer(error):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)


class SchemaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        schema = load(os.path.join(HERE, "schema.json"))
        jsonschema.Draft202012Validator.check_schema(schema)
        cls.validator = jsonschema.Draft202012Validator(schema)

    def test_shipped_policies_are_valid(self):
        files = [os.path.join(HERE, "default.json")] + sorted(glob.glob(os.path.join(HERE, "examples", "*.json")))
        self.assertGreaterEqual(len(files), 3)
        for path in files:
            errors = [pointer(e) + ": " + e.message for e in self.validator.iter_errors(load(path))]
            self.assertEqual(errors, [], path)

    def test_invalid_documents_fail_at_the_expected_paths(self):
        cases = sorted(glob.glob(os.path.join(HERE, "testdata", "invalid", "*.json")))
        self.assertGreater(len(cases), 0)
        for path in cases:
            case = load(path)
            found = sorted({pointer(e) for e in self.validator.iter_errors(case["policy"])})
            self.assertEqual(found, sorted(set(case["schema_errors"])), path)


if __name__ == "__main__":
    sys.exit(unittest.main())
