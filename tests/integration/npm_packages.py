"""The npm packages the browser and client tests use, installed before the suite runs.

Tests send no packet off the machine, so they never install anything: `make test` runs
`python3 tests/integration/npm_packages.py install BUILD_DIR` first (packaging/test-deps.sh),
and a test whose package is absent skips (77) saying how to install it.
"""
import os
import shutil
import subprocess
import sys

SKIP = 77
INSTALL_TIMEOUT_S = 300
# Folder of the build tree -> the package installed there (npm picks the newest in range).
PACKAGES = {
    "tests/browser/npm": "playwright-core@>=1.40 <1.62",
    "tests/conformance/npm": "openai@>=4 <7",
}


def _name(spec):
    return spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec


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


def install(build_dir):
    """Installs every package that is not there yet; returns the failures as text."""
    if shutil.which("npm") is None:
        return ["npm is not installed: the browser and npm-client tests will skip"]
    failures = []
    for folder, spec in PACKAGES.items():
        npm_dir = os.path.join(build_dir, folder)
        if os.path.isfile(os.path.join(npm_dir, "node_modules", _name(spec), "package.json")):
            continue
        os.makedirs(npm_dir, exist_ok=True)
        try:
            proc = subprocess.run(["npm", "install", "--prefix", npm_dir, "--no-audit", "--no-fund", "--no-save", spec],
                                  capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failures.append("npm install %s timed out (no registry reachable?)" % spec)
            continue
        if proc.returncode != 0:
            failures.append("npm install %s failed:\n%s" % (spec, proc.stderr[-2000:]))
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "install":
        sys.exit("usage: npm_packages.py install BUILD_DIR")
    problems = install(os.path.abspath(sys.argv[2]))
    for problem in problems:
        print("npm_packages: " + problem, file=sys.stderr)
    sys.exit(0)  # the tests that need a missing package skip and say why
