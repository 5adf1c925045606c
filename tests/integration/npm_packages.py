"""The npm packages the browser and client tests use, installed before the suite runs.

Tests send no packet off the machine, so they never install anything: `make test` runs
`python3 tests/integration/npm_packages.py install BUILD_DIR` first (packaging/test-deps.sh),
and a test whose package is absent skips (77) saying how to install it.

Each folder's packages are pinned by a lock in tests/npm/ (exact versions and their sha512
integrity): `npm ci` installs exactly those bytes or fails, and runs no package's install
scripts, so a release published later, or a tampered tarball, never runs on the test machine.
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
INSTALL_TIMEOUT_S = 300
LOCKS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "npm")
# Folder of the build tree -> the folder of tests/npm/ whose package.json and lock it installs.
LOCKED_FOLDERS = {
    "tests/browser/npm": "browser",
    "tests/conformance/npm": "conformance",
}


def skip(message):
    print("SKIP: " + message)
    sys.exit(SKIP)


def require(npm_dir, package):
    """Skips the calling test unless node runs and `package` is installed in `npm_dir`."""
    if shutil.which("node") is None:
        skip("node is not installed (Debian: apt-get install nodejs npm)")
    if not os.path.isfile(os.path.join(npm_dir, "node_modules", package, "package.json")):
        skip("%s has no %s package: `make test` installs it before the suite (packaging/test-deps.sh), "
             "or run: python3 tests/integration/npm_packages.py install BUILD_DIR" % (npm_dir, package))


def _locked_versions(lock_path):
    """{package name: version} of every package the lock installs."""
    with open(lock_path) as f:
        packages = json.load(f)["packages"]
    return {path[len("node_modules/"):]: entry["version"]
            for path, entry in packages.items() if path.startswith("node_modules/")}


def _installed_as_locked(npm_dir, versions):
    for name, version in versions.items():
        try:
            with open(os.path.join(npm_dir, "node_modules", name, "package.json")) as f:
                if json.load(f).get("version") != version:
                    return False
        except (OSError, ValueError):
            return False
    return True


def install(build_dir):
    """Installs each folder's locked packages unless they are there already; returns the failures as text."""
    if shutil.which("npm") is None:
        return ["npm is not installed: the browser and npm-client tests will skip"]
    failures = []
    for folder, locked in LOCKED_FOLDERS.items():
        npm_dir = os.path.join(build_dir, folder)
        lock_dir = os.path.join(LOCKS_DIR, locked)
        if _installed_as_locked(npm_dir, _locked_versions(os.path.join(lock_dir, "package-lock.json"))):
            continue
        os.makedirs(npm_dir, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(os.path.join(lock_dir, name), os.path.join(npm_dir, name))
        try:
            proc = subprocess.run(["npm", "ci", "--prefix", npm_dir, "--ignore-scripts", "--no-audit", "--no-fund"],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failures.append("npm ci of tests/npm/%s timed out (no registry reachable?)" % locked)
            continue
        if proc.returncode != 0:
            failures.append("npm ci of tests/npm/%s failed:\n%s" % (locked, proc.stderr[-2000:]))
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "install":
        sys.exit("usage: npm_packages.py install BUILD_DIR")
    problems = install(os.path.abspath(sys.argv[2]))
    for problem in problems:
        print("npm_packages: " + problem, file=sys.stderr)
    sys.exit(0)  # the tests that need a missing package skip and say why
