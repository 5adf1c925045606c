"""Starts the real kimi-appliance binary on a free loopback port for integration tests.

Each Daemon gets its own temporary directory (config, data) and port 0, so tests may run in
parallel with each other and with anything else on the machine. Python standard library only.

Every endpoint but /healthz and /readyz needs a credential, so before starting the daemon the
harness creates an admin API key in its data directory with kimictl (Daemon.api_key), and
request() sends it as "Authorization: Bearer ..." unless told otherwise: pass auth=None to
send no credential, or auth="sk-kimi-..." (any string) to send that one instead. A test that
sets its own Authorization, x-api-key or Cookie header sends only what it set.
"""
import json
import os
import queue
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import private_netns

DAEMON = os.environ.get("KIMI_APPLIANCE_BIN", "")
KIMICTL = os.environ.get("KIMICTL_BIN", "")
KIMI_ENGINE = os.environ.get("KIMI_ENGINE_BIN", "")

# Generous bounds for waiting on the daemon; they only stop a hung test, they measure nothing.
START_TIMEOUT_S = 30
EXIT_TIMEOUT_S = 30
# How long request() waits for a whole reply. A non-streamed completion answers only when its
# last token is decoded, which on a loaded 2-core CI machine can take far longer than the 10 s
# that suits connects and quick admin calls.
REPLY_TIMEOUT_S = 120


# The files that add routes to the daemon's route table (appliance/http/routes.h): the probes,
# the console, the OpenAI API and every /admin/v1 group.
_SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROUTE_SOURCES = [os.path.join("appliance", "http", name)
                 for name in ("handlers.cc", "console_handlers.cc", "openai_handlers.cc")] + sorted(
    os.path.join("appliance", "admin", name)
    for name in os.listdir(os.path.join(_SOURCE, "appliance", "admin")) if name.endswith("_routes.cc"))

# One route as the table's Add calls write it: method, path pattern, then its permission.
ROUTE_ENTRY = re.compile(r'\{"(GET|POST|PUT|PATCH|DELETE)", "(/[^"]*)", "\w+",.*?\bP::(\w+)', re.S)


def route_entries(source_dir=_SOURCE):
    """(method, path pattern, permission constant) of every route, read from ROUTE_SOURCES."""
    entries = []
    for path in ROUTE_SOURCES:
        with open(os.path.join(source_dir, path), encoding="utf-8") as f:
            entries += ROUTE_ENTRY.findall(f.read())
    return entries


def public_requests():
    """(method, target, status) of requests without a credential that may not send 8 MB: every
    method on every path of a route open to anyone (413, or 401 where that method needs a
    credential), and the sign-in under targets the HTTP library would read as its path (400)."""
    public = {(m, re.sub(r"\{[^}]*\}", "x", p)) for m, p, permission in route_entries() if permission == "kPublic"}
    other_paths = {re.sub(r"\{[^}]*\}", "x", p) for _, p, permission in route_entries() if permission != "kPublic"}
    cases = []
    for path in sorted({p for _, p in public}):
        for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"):
            open_to_anyone = ("GET" if method == "HEAD" else method, path) in public or path not in other_paths
            cases.append((method, path, 413 if open_to_anyone else 401))
    return cases + [("POST", "/admin/v1/sessio%6E", 400), ("POST", "?/admin/v1/session", 400),
                    ("POST", "/healthz#/admin/v1/session", 400)]


def write_config(directory, config):
    path = os.path.join(directory, "appliance.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return path


def base_config(limits=None):
    config = {
        "server": {"listen": "127.0.0.1:0", "allow_plain_http_on_loopback": True},
        "storage": {"data_dir": "data"},
        "log": {"level": "info", "format": "json"},
    }
    if limits:
        config["limits"] = limits
    return config


# Small Argon2id parameters keep sign-in quick in tests; the algorithm is the same.
FAST_AUTH = {"argon2_ops_limit": 1, "argon2_mem_limit_kib": 8, "password_min_length": 12}


def fast_auth_config(**auth):
    """base_config() with FAST_AUTH, and `auth` over it."""
    config = base_config()
    config["auth"] = dict(FAST_AUTH, **auth)
    return config


def data_dir_of(directory, config):
    """The data directory a config file in `directory` names (relative paths resolve there)."""
    data_dir = config.get("storage", {}).get("data_dir", "data")
    return data_dir if os.path.isabs(data_dir) else os.path.join(directory, data_dir)


def audit_rows(data_dir, where="", params=()):
    """The audit log's records as dicts, in sequence order, read-only from audit.db; `where` is
    an SQL condition over audit_records with `params` bound to it."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "audit.db"), uri=True)
    db.row_factory = sqlite3.Row
    try:
        condition = " WHERE " + where if where else ""
        return [dict(r) for r in db.execute("SELECT * FROM audit_records%s ORDER BY seq" % condition, params)]
    finally:
        db.close()


def create_api_key(data_dir, name="harness", role="admin", *extra):
    """Creates an API key with kimictl directly in `data_dir`; returns (key, key_id)."""
    code, out, err = run_to_exit([KIMICTL, "key", "create", "--data-dir", data_dir, "--name", name, "--role", role,
                                  *extra])
    if code != 0:
        raise RuntimeError("kimictl key create failed: " + err)
    key_id = re.search(r"created (key_[0-9a-f]+)", err).group(1)
    return out.strip(), key_id


def run_to_exit(args, timeout=EXIT_TIMEOUT_S):
    """Runs a program that is expected to exit by itself; returns (code, stdout, stderr)."""
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


class Daemon:
    def __init__(self, limits=None, config=None):
        self.tmp = tempfile.TemporaryDirectory(prefix="kimi-it-")
        self.dir = self.tmp.name
        config = config or base_config(limits)
        private_netns.check_addresses(config)  # tests reach only loopback or a namespace they made
        self.config_path = write_config(self.dir, config)
        self.data_dir = data_dir_of(self.dir, config)
        # The credential request() sends by default: an admin key made before the start.
        self.api_key, self.api_key_id = create_api_key(self.data_dir)
        self.lines = []          # every stderr line, in order
        self._lines_lock = threading.Lock()
        self._queue = queue.Queue()
        self.proc = subprocess.Popen([DAEMON, "--config", self.config_path], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self.port = self._wait_for_listening()

    def _read_stderr(self):
        for line in self.proc.stderr:
            with self._lines_lock:
                self.lines.append(line.rstrip("\n"))
            self._queue.put(line)
        self._queue.put(None)

    def _wait_for_listening(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=deadline - time.monotonic())
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError("daemon exited before listening:\n" + "\n".join(self.lines))
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("msg") == "listening":
                return int(event["address"].rsplit(":", 1)[1])
        self.proc.kill()
        raise RuntimeError("daemon did not report listening:\n" + "\n".join(self.lines))

    def auth_header(self):
        """The default credential as a raw header line, for tests that write requests by hand."""
        return b"Authorization: Bearer " + self.api_key.encode() + b"\r\n"

    def events(self):
        """Every stderr line that is a JSON log event, parsed."""
        out = []
        with self._lines_lock:
            lines = list(self.lines)
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def wait_for_event(self, predicate, timeout=EXIT_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events():
                if predicate(e):
                    return e
            time.sleep(0.05)
        return None

    # An ssl.SSLContext for a daemon that serves HTTPS (server.tls): connect() then speaks TLS,
    # so request() and read_reply() work unchanged.
    ssl_context = None

    def connect(self, timeout=10):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        if self.ssl_context is not None:
            s = self.ssl_context.wrap_socket(s, server_hostname="localhost")
        return s

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait_exit()

    def wait_exit(self):
        code = self.proc.wait(timeout=EXIT_TIMEOUT_S)
        self._reader.join(timeout=EXIT_TIMEOUT_S)
        return code

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()
        if os.environ.get("KIMI_IT_VERBOSE"):
            print("\n--- daemon log ---\n" + "\n".join(self.lines), file=sys.stderr)
        self.tmp.cleanup()


class HttpReply:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body)


# Bytes received past the end of the last response read from each socket (pipelining).
_leftover = weakref.WeakKeyDictionary()


def read_head(sock):
    """Reads a response head; returns (status, reason, headers, bytes already read past it)."""
    data = _leftover.pop(sock, b"")
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before a full response head: %r" % data)
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ?(.*)", lines[0])
    if not m:
        raise ValueError("bad status line %r" % lines[0])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(m.group(1)), m.group(2), headers, rest


def read_chunk(sock, buffered):
    """Reads one chunk of a chunked body; returns (payload, leftover). b"" marks the end."""
    data = buffered
    while b"\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise ConnectionError("connection closed inside a chunked body")
        data += more
    size_line, data = data.split(b"\r\n", 1)
    size = int(size_line.split(b";")[0], 16)
    while len(data) < size + 2:
        more = sock.recv(65536)
        if not more:
            raise ConnectionError("connection closed inside a chunk")
        data += more
    if data[size:size + 2] != b"\r\n":
        raise ValueError("chunk of %d bytes not followed by CRLF" % size)
    return data[:size], data[size + 2:]


def read_reply(sock):
    """Reads one HTTP/1.1 response (Content-Length framed or chunked) from a socket."""
    status, reason, headers, rest = read_head(sock)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            payload, rest = read_chunk(sock, rest)
            if not payload:
                break
            body += payload
        # The last chunk is followed by an empty trailer line.
        while not rest.startswith(b"\r\n"):
            more = sock.recv(65536)
            if not more:
                break
            rest += more
        if rest[2:]:
            _leftover[sock] = rest[2:]
        return HttpReply(status, reason, headers, body.decode("utf-8"))
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed inside the body")
        rest += chunk
    if len(rest) > length:
        _leftover[sock] = rest[length:]
    return HttpReply(status, reason, headers, rest[:length].decode("utf-8"))


def send_request(sock, method, path, headers=None, body=b""):
    """Writes one request (Connection: close) on an open socket; its Host is 127.0.0.1 unless
    `headers` names another."""
    headers = dict(headers or {})
    host = next((headers.pop(k) for k in list(headers) if k.lower() == "host"), "127.0.0.1")
    head = "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n" % (method, path, host)
    for k, v in headers.items():
        head += "%s: %s\r\n" % (k, v)
    if body:
        head += "Content-Length: %d\r\n" % len(body)
    sock.sendall(head.encode() + b"\r\n" + body)


_DEFAULT = object()
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "cookie")


def request(daemon, method, path, headers=None, body=b"", auth=_DEFAULT):
    """One request on a fresh connection; returns HttpReply.

    auth: by default the daemon's admin key as a bearer token; None sends no credential; a
    string is sent as the bearer token instead. Headers that carry a credential replace it.
    """
    headers = dict(headers or {})
    if not any(k.lower() in _CREDENTIAL_HEADERS for k in headers):
        token = daemon.api_key if auth is _DEFAULT else auth
        if token is not None:
            headers["Authorization"] = "Bearer " + token
    with daemon.connect(timeout=REPLY_TIMEOUT_S) as s:
        send_request(s, method, path, headers, body)
        return read_reply(s)


def post_json(daemon, path, payload):
    return request(daemon, "POST", path, {"Content-Type": "application/json"}, json.dumps(payload).encode())


def make_signed_model(directory, preset="k3-nano", quantize=None):
    """Synthesises a model with its demo tokenizer under directory/model, makes a signing key
    and signs the model. quantize: a `kimi-engine quantize --scheme` (int8, mxfp4-dense); the
    model is then synthesised under directory/bf16 and its quantised copy is what gets signed.
    Returns (model_dir, public_key_path, private_key_path)."""
    model = os.path.join(directory, "model")
    key = os.path.join(directory, "signing-key")
    steps = [[KIMI_ENGINE, "synth", "--preset", preset, "--out", model]]
    if quantize:
        bf16 = os.path.join(directory, "bf16")
        steps = [[KIMI_ENGINE, "synth", "--preset", preset, "--out", bf16],
                 [KIMI_ENGINE, "quantize", "--in", bf16, "--out", model, "--scheme", quantize]]
    for args in steps + [[KIMICTL, "keygen", "--out", key],
                         [KIMICTL, "model", "sign", "--key", key + ".pem", "--quiet", model]]:
        code, out, err = run_to_exit(args, timeout=300)
        if code != 0:
            raise RuntimeError("%s failed (%d): %s%s" % (" ".join(args), code, out, err))
    return model, key + ".pub.pem", key + ".pem"


class SignedModel:
    """A demo model synthesised and signed with a fresh key under `directory` (make_signed_model),
    and the one way the tests start a daemon serving it (serve()).

    trust_dir: trust the key through a directory holding it (directory/trust), which the admin
    API can add keys to and remove them from, instead of the public key file itself.
    quantize: sign and serve the model quantised with this scheme (make_signed_model)."""

    def __init__(self, directory, preset="k3-nano", trust_dir=False, quantize=None):
        self.dir, self.public_key, self.private_key = make_signed_model(directory, preset, quantize)
        self.trust_store = self.public_key
        if trust_dir:
            self.trust_store = os.path.join(directory, "trust")
            os.makedirs(self.trust_store)
            shutil.copyfile(self.public_key, os.path.join(self.trust_store, "demo-signer.pem"))

    def serve(self, config=None, **model):
        """Starts a Daemon with `config` (default base_config()) whose model section is this
        model and its trust store plus `model` (served_id=..., threads=..., import_roots=...), and
        waits until the model is ready. Raises RuntimeError, with the daemon closed, when it is
        not ready in time."""
        config = base_config() if config is None else config
        config["model"] = dict({"dir": self.dir, "trust_store": self.trust_store}, **model)
        daemon = Daemon(config=config)
        state = wait_until_ready(daemon)
        if not state or not state["ready"]:
            daemon.close()
            raise RuntimeError("the model did not become ready: %r" % (state,))
        return daemon


    def on_medium(self, directory, **model):
        """Copies this model onto a "mounted medium" under `directory` (directory/media/demo) and
        returns (config, source): a base_config() whose model section trusts this model's key and
        may import from that medium, plus `model` (served_id=..., store_id=..., ...), for a daemon
        that serves the model from its store once it is imported and activated."""
        media = os.path.join(directory, "media")
        source = os.path.join(media, "demo")
        shutil.copytree(self.dir, source)
        config = base_config()
        config["model"] = dict({"trust_store": self.trust_store, "import_roots": [media]}, **model)
        return config, source


def import_model(daemon, model, source, timeout=120):
    """Imports `source` into the store as `model` through the admin API and waits for the job to
    end; returns the job's last state (its "version" once it succeeded)."""
    reply = post_json(daemon, "/admin/v1/models/import", {"model": model, "source": source})
    if reply.status != 202:
        raise RuntimeError("import refused: %d %s" % (reply.status, reply.body))
    job = reply.json()
    deadline = time.monotonic() + timeout
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        job = request(daemon, "GET", "/admin/v1/models/import?job=" + job["job"]).json()
    return job


def wait_until_ready(daemon, component="model", timeout=START_TIMEOUT_S * 4):
    """Polls /readyz until `component` is ready; returns its last state."""
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = request(daemon, "GET", "/readyz").json()["components"].get(component)
        if state and state["ready"]:
            return state
        time.sleep(0.1)
    return state


def is_closed(sock, timeout):
    """True when the peer closes (or resets) `sock` within `timeout` seconds."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except socket.timeout:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
