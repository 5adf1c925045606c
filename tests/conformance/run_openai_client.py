"""Runs openai_client_test.mjs (the official `openai` npm client) against the real daemon.

The package is installed with npm into a folder of the build tree before the suite runs
(tests/integration/npm_packages.py, from `make test`), never by the test; without node or the
package the test is skipped (exit 77,
CTest's SKIP_RETURN_CODE) with a message saying which. It is also skipped when the chat route
answers 404 (the endpoint is not in this build) or no model is loaded.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance python3 tests/conformance/run_openai_client.py \
      --npm-dir build/tests/conformance/npm
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conformance_harness import CHAT_PATH, DEFAULT_MODEL, conformance_config, error_of, model_served  # noqa: E402
import npm_packages  # noqa: E402
from daemon_harness import Daemon, post_json, request  # noqa: E402

SKIP = 77
NODE_TIMEOUT_S = 600


def skip(message):
    print("SKIP: " + message)
    sys.exit(SKIP)


def ensure_package(npm_dir):
    npm_packages.require(npm_dir, 'openai')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npm-dir", required=True, help="build-tree folder for node_modules")
    parser.add_argument("--checks", choices=("api", "constrained"), default="api",
                        help="api: requests, errors, streaming; constrained: forced tool calls, json_schema")
    args = parser.parse_args()
    npm_dir = os.path.abspath(args.npm_dir)
    ensure_package(npm_dir)

    config = conformance_config()
    daemon = Daemon(config=config)
    try:
        probe = post_json(daemon, CHAT_PATH, {"model": DEFAULT_MODEL, "messages": []})
        if probe.status == 404 and (error_of(probe) or {}).get("code") == "unknown_route":
            skip("POST %s answers 404: the chat endpoint is not in this build" % CHAT_PATH)
        if not model_served(daemon, config):
            skip("no model is loaded (/readyz is not 200); set KIMI_CONFORMANCE_CONFIG to serve one")
        model = DEFAULT_MODEL
        models = request(daemon, "GET", "/v1/models")
        if models.status == 200 and models.json().get("data"):
            model = models.json()["data"][0]["id"]
        env = dict(os.environ, KIMI_API_KEY=daemon.api_key, KIMI_BASE_URL="http://127.0.0.1:%d/v1" % daemon.port, KIMI_MODEL=model, KIMI_CHECKS=args.checks,
                   NODE_PATH=os.path.join(npm_dir, "node_modules"))
        # An .mjs file resolves packages from its own folder upwards, not NODE_PATH: run a copy
        # placed beside node_modules.
        script = os.path.join(npm_dir, "openai_client_test.mjs")
        shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "openai_client_test.mjs"), script)
        proc = subprocess.run(["node", script], env=env, timeout=NODE_TIMEOUT_S)
        return proc.returncode
    finally:
        daemon.stop()
        daemon.close()


if __name__ == "__main__":
    sys.exit(main())
