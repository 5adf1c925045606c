"""The test machine's npm packages are pinned: exact versions with sha512 integrity, installed
by `npm ci` without install scripts (tests/integration/npm_packages.py)."""
import json
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npm_packages  # noqa: E402

EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+$")


class NpmLocksTest(unittest.TestCase):
    def locks(self):
        for folder in sorted(set(npm_packages.LOCKED_FOLDERS.values())):
            lock_dir = os.path.join(npm_packages.LOCKS_DIR, folder)
            with open(os.path.join(lock_dir, "package.json")) as f:
                manifest = json.load(f)
            with open(os.path.join(lock_dir, "package-lock.json")) as f:
                lock = json.load(f)
            yield folder, manifest, lock

    def test_every_dependency_is_an_exact_version(self):
        for folder, manifest, _ in self.locks():
            for name, spec in manifest.get("dependencies", {}).items():
                self.assertRegex(spec, EXACT_VERSION, "tests/npm/%s: %s" % (folder, name))
            self.assertNotIn("devDependencies", manifest, folder)

    def test_every_locked_package_carries_its_sha512(self):
        for folder, manifest, lock in self.locks():
            installed = {path: entry for path, entry in lock["packages"].items() if path.startswith("node_modules/")}
            self.assertTrue(installed, folder)
            for path, entry in installed.items():
                self.assertRegex(entry.get("integrity", ""), r"^sha512-", "tests/npm/%s: %s" % (folder, path))
                self.assertRegex(entry.get("version", ""), EXACT_VERSION, "tests/npm/%s: %s" % (folder, path))
            for name, spec in manifest["dependencies"].items():
                self.assertEqual(installed["node_modules/" + name]["version"], spec, folder)

    def test_a_package_of_another_version_is_installed_again(self):
        with tempfile.TemporaryDirectory() as npm_dir:
            package_dir = os.path.join(npm_dir, "node_modules", "left-pad")
            os.makedirs(package_dir)
            with open(os.path.join(package_dir, "package.json"), "w") as f:
                json.dump({"name": "left-pad", "version": "1.3.1"}, f)
            self.assertTrue(npm_packages._installed_as_locked(npm_dir, {"left-pad": "1.3.1"}))
            self.assertFalse(npm_packages._installed_as_locked(npm_dir, {"left-pad": "1.3.0"}))
            self.assertFalse(npm_packages._installed_as_locked(npm_dir, {"left-pad": "1.3.1", "other": "1.0.0"}))


if __name__ == "__main__":
    unittest.main()
