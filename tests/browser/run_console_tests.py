"""Runs the web console's browser suites (console_test.mjs, then suites/*.mjs) against the
real daemon.

Starts kimi-appliance through the integration harness with the console served from the
source tree's admin-ui/ and a signed k3-nano demo model, puts two copies of that model on a
stand-in for a mounted medium (model.import_roots: a temp folder), one intact and one with a
byte flipped in its largest file, and a second signed version, for the models screen to import;
trusts the signing key through a trust directory and makes one more key for the trust store screen; bootstraps the first console admin
with kimictl, and runs the tests in Debian's Chromium (headless) through playwright-core.
playwright-core is installed with npm into a folder of the build tree before the suite runs
(tests/integration/npm_packages.py, from `make test`), never by the test and never into the
source tree. The test runs in a network namespace of its own with only loopback (Chromium
tries addresses of its own whatever its flags); it is skipped (exit 77, CTest's
SKIP_RETURN_CODE) with a message where no namespace can be made, and when Chromium, node or
the package is missing. Screenshots of every
screen go to --screenshots.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
  KIMI_ENGINE_BIN=build/engine/kimi-engine python3 tests/browser/run_console_tests.py \\
      --npm-dir build/tests/browser/npm --screenshots build/screenshots
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import npm_packages  # noqa: E402
import private_netns  # noqa: E402
from daemon_harness import KIMICTL, SignedModel, fast_auth_config, run_to_exit  # noqa: E402

SKIP = 77
# The newest releases need node 20; Debian 12 ships node 18.
# Bounds that stop a hung run; they measure nothing. The suite's time grows with the machine's
# load: at load 20 it ran for over three minutes (the CTest TIMEOUT is 600 s).
NODE_TIMEOUT_S = 420
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def skip(message):
    print("SKIP: " + message)
    sys.exit(SKIP)


def find_chromium():
    wanted = os.environ.get("KIMI_CHROMIUM")
    for candidate in ([wanted] if wanted else []) + list(CHROMIUM_CANDIDATES):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    skip("Chromium is not installed (Debian: apt-get install chromium; packaging/build-deps.sh lists it)")


def ensure_package(npm_dir):
    npm_packages.require(npm_dir, 'playwright-core')


def console_config():
    config = fast_auth_config()
    config["console"] = {"assets_dir": os.path.join(SOURCE, "admin-ui")}
    return config


def stage_media(model_dir, media):
    """Copies the signed model to media/signed and, with one byte of its largest file
    flipped, to media/tampered. Returns both paths."""
    signed = os.path.join(media, "signed")
    tampered = os.path.join(media, "tampered")
    shutil.copytree(model_dir, signed)
    shutil.copytree(model_dir, tampered)
    files = [os.path.join(root, name) for root, _, names in os.walk(tampered) for name in names]
    largest = max(files, key=os.path.getsize)
    with open(largest, "r+b") as f:
        f.seek(os.path.getsize(largest) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    return signed, tampered


def stage_second_version(model_dir, media, private_key):
    """A second signed version of the model on the medium: the same files plus a note, signed
    again with the same key (a new digest, so the store numbers it version 2)."""
    second = os.path.join(media, "signed-v2")
    shutil.copytree(model_dir, second)
    with open(os.path.join(second, "RELEASE-NOTES.txt"), "w") as f:
        f.write("second version of the demo model\n")
    code, out, err = run_to_exit([KIMICTL, "model", "sign", "--key", private_key, "--quiet", second], timeout=300)
    if code != 0:
        raise RuntimeError("kimictl model sign failed: %s%s" % (out, err))
    return second


def extra_public_key(scratch):
    """A key pair the trust store does not hold yet; its public half's path."""
    key = os.path.join(scratch, "extra-key")
    code, out, err = run_to_exit([KIMICTL, "keygen", "--out", key])
    if code != 0:
        raise RuntimeError("kimictl keygen failed: %s%s" % (out, err))
    return key + ".pub.pem"


def suites(only):
    """The suites in the order they run: console_test.mjs (it uses the one-time password),
    then suites/*.mjs by name; `only` (comma-separated file stems) keeps some of them."""
    found = [("admin", os.path.join(HERE, "console_test.mjs"))]
    folder = os.path.join(HERE, "suites")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".mjs"):
            found.append((name[:-len(".mjs")], os.path.join(folder, name)))
    wanted = {stem.strip() for stem in only.split(",") if stem.strip()}
    return [(stem, path) for stem, path in found if not wanted or stem in wanted or
            (stem == "admin" and "console_test" in wanted)]


def run_suites(npm_dir, env, only):
    """Runs each suite as its own node process; the number of failed checks over all of them
    (a suite's exit status is its failures)."""
    # An .mjs file resolves packages from its own folder upwards: the suites run as copies
    # laid out under the folder of node_modules as in the source tree, beside the harness.
    shutil.copyfile(os.path.join(HERE, "harness.mjs"), os.path.join(npm_dir, "harness.mjs"))
    os.makedirs(os.path.join(npm_dir, "suites"), exist_ok=True)
    failures = 0
    for stem, source in suites(only):
        script = os.path.join(npm_dir, os.path.relpath(source, HERE))
        shutil.copyfile(source, script)
        print("== suite %s (%s)" % (stem, os.path.relpath(source, SOURCE)), flush=True)
        code = subprocess.run(["node", script], env=dict(env, KIMI_SUITE=stem), timeout=NODE_TIMEOUT_S).returncode
        if code != 0:
            print("== suite %s: %d failed" % (stem, code), flush=True)
        failures += code
    return min(failures, 100)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npm-dir", required=True, help="build-tree folder for node_modules")
    parser.add_argument("--screenshots", default="", help="folder for the screenshots (created)")
    parser.add_argument("--only", default=os.environ.get("KIMI_BROWSER_SUITES", ""),
                        help="comma-separated suites to run (file stems, e.g. console_test,audit); default all")
    args = parser.parse_args()
    chromium = find_chromium()
    npm_dir = os.path.abspath(args.npm_dir)
    ensure_package(npm_dir)

    with tempfile.TemporaryDirectory(prefix="kimi-console-model-") as scratch:
        # A trust directory (not a single file), so that the console can add and remove keys.
        signed = SignedModel(scratch, trust_dir=True)
        media = os.path.join(scratch, "media")
        signed_copy, tampered_copy = stage_media(signed.dir, media)
        second_copy = stage_second_version(signed.dir, media, signed.private_key)
        try:
            daemon = signed.serve(console_config(), import_roots=[media])
        except RuntimeError as e:
            print("the demo model did not load: %s" % e)
            return 1
        try:
            code, otp, err = run_to_exit([KIMICTL, "admin", "bootstrap", "--data-dir", daemon.data_dir])
            if code != 0:
                print("kimictl admin bootstrap failed: " + err)
                return 1
            env = dict(os.environ, KIMI_CONSOLE_URL="http://127.0.0.1:%d" % daemon.port, KIMI_ADMIN_OTP=otp.strip(),
                       KIMI_CHROMIUM=chromium, KIMI_IMPORT_SIGNED=signed_copy, KIMI_IMPORT_TAMPERED=tampered_copy,
                       KIMI_IMPORT_SIGNED_V2=second_copy, KIMI_EXTRA_PUBLIC_KEY=extra_public_key(scratch),
                       KIMI_SCREENSHOT_DIR=os.path.abspath(args.screenshots) if args.screenshots else "")
            return run_suites(npm_dir, env, args.only)
        finally:
            daemon.stop()
            daemon.close()


if __name__ == "__main__":
    # Chromium reaches for addresses of its own (an IPv6 reachability probe to a public DNS
    # address, whatever the flags): the browser, and the daemon it talks to, run in a network
    # namespace with only loopback, so nothing it tries leaves the machine.
    private_netns.run_inside_private_netns()
    sys.exit(main())
