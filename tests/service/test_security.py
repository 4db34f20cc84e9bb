"""Host and Origin checks, the table code and https, through the real app (farklecam.service.security,
farklecam.service.tls)."""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning
from starlette.websockets import WebSocketDisconnect

from farklecam.service.app import create_app
from farklecam.service.code_attempts import WrongCodeLimit
from farklecam.service.security import CODE_HEADER, SitePolicy, needs_code, served_names
from farklecam.service.settings import Settings
from farklecam.service.table_code import CODE_ALPHABET, generate_code, normalize_code, same_code, validate_code
from farklecam.service.tls import TlsError, check_pair, self_signed

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient
    from starlette.testclient import WebSocketDenialResponse

CODE = "TBL7-CODE"


@contextlib.contextmanager
def client_for(tmp_path: Path, base_url: str = "http://localhost", **settings: object) -> Iterator[TestClient]:
    app = create_app(Settings(db_path=tmp_path / "g.sqlite3", **settings))  # type: ignore[arg-type]
    with TestClient(app, base_url=base_url) as client:
        yield client


# ----------------------------------------------------------------------------- Host
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "LOCALHOST:8000", "[::1]:8000", "localhost."])
def test_loopback_names_pass(tmp_path: Path, host: str) -> None:
    with client_for(tmp_path) as client:
        assert client.get("/api/health", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "192.168.1.20:8000", "localhost.evil.example"])
def test_another_host_is_refused_as_dns_rebinding(tmp_path: Path, host: str) -> None:
    with client_for(tmp_path) as client:
        answer = client.get("/api/health", headers={"host": host})
        assert answer.status_code == 403 and answer.json()["error"] == "ForbiddenHost"
        assert "--allow-host" in answer.json()["detail"] and repr(host) in answer.json()["detail"]
        assert client.post("/api/score", headers={"host": host}, json={"dice": [1]}).status_code == 403
        assert client.get("/", headers={"host": host}).status_code == 403  # the page too: it would run their script


def test_a_refusal_echoes_only_an_excerpt(tmp_path: Path) -> None:
    with client_for(tmp_path) as client:
        long_host = "a" * 5000 + ".example"
        answer = client.get("/api/health", headers={"host": long_host, "origin": "http://" + "b" * 5000})
        assert answer.status_code == 403 and len(answer.text) < 600
        answer = client.get("/api/health", headers={"origin": "http://" + "b" * 5000})
        assert answer.status_code == 403 and len(answer.text) < 600


def test_the_served_and_allowed_names_pass(tmp_path: Path) -> None:
    with client_for(tmp_path, host="table.lan", allow_hosts=("den.lan",), table_code=CODE) as client:
        for host in ("table.lan:8000", "den.lan", "localhost"):
            assert client.get("/api/health", headers={"host": host, "x-table-code": CODE}).status_code == 200
        assert client.get("/api/health", headers={"host": "other.lan", "x-table-code": CODE}).status_code == 403


def test_on_every_interface_any_address_and_the_machines_name_pass(tmp_path: Path) -> None:
    policy = SitePolicy.from_settings(Settings(host="0.0.0.0"))
    assert socket.gethostname().lower() in policy.names
    with client_for(tmp_path, host="0.0.0.0", table_code=CODE) as client:
        for host in ("192.168.1.20:8000", "[fe80::1]:8000", "10.0.0.7", socket.gethostname()):
            assert client.get("/api/health", headers={"host": host, "x-table-code": CODE}).status_code == 200, host
        assert client.get("/api/health", headers={"host": "rebind.example", "x-table-code": CODE}).status_code == 403


# ----------------------------------------------------------------------------- Origin
def test_same_origin_passes_and_a_cross_site_origin_is_refused(tmp_path: Path) -> None:
    with client_for(tmp_path, base_url="http://localhost:8000") as client:
        assert client.get("/api/health", headers={"origin": "http://localhost:8000"}).status_code == 200
        for origin in ("http://evil.example", "http://localhost:3000", "http://127.0.0.1:8000", "null", "::::"):
            answer = client.post("/api/score", headers={"origin": origin}, json={"dice": [1, 5]})
            assert answer.status_code == 403, origin
            assert answer.json()["error"] == "ForbiddenOrigin" and "cross-site" in answer.json()["detail"]
    with client_for(tmp_path, base_url="https://localhost") as client:  # default ports on both sides
        assert client.get("/api/health", headers={"origin": "https://localhost"}).status_code == 200
        assert client.get("/api/health", headers={"origin": "https://localhost:444"}).status_code == 403


def test_a_websocket_from_another_site_or_host_never_opens(tmp_path: Path) -> None:
    with client_for(tmp_path) as client:
        with client.websocket_connect("/ws/table/-", headers={"origin": "http://localhost"}) as ws:
            ws.send_json({"type": "ping"})
            assert ws.receive_json() == {"type": "pong"}
        for headers in ({"origin": "http://evil.example"}, {"host": "evil.example"}):
            with (
                pytest.raises(WebSocketDenialResponse) as refused,
                client.websocket_connect("/ws/table/-", headers=headers),
            ):
                pass
            assert refused.value.status_code == 403


# ----------------------------------------------------------------------------- table code
def test_on_loopback_no_code_is_needed(tmp_path: Path) -> None:
    with client_for(tmp_path) as client:
        assert client.get("/api/session").json() == {"code_required": False}
        assert client.get("/api/health").status_code == 200


def test_beyond_loopback_every_call_needs_the_code(tmp_path: Path) -> None:
    with client_for(tmp_path, base_url="http://192.168.1.20:8000", host="0.0.0.0", table_code=CODE) as client:
        assert client.get("/api/session").json() == {"code_required": True}
        for path in ("/", "/app.js", "/openapi.json"):  # the page must load to ask for the code
            assert client.get(path).status_code == 200, path
        missing = client.get("/api/health")
        assert missing.status_code == 401 and missing.json()["error"] == "TableCodeRequired"
        assert "X-Table-Code" in missing.json()["detail"] and "X-Table-Code" in missing.headers["www-authenticate"]
        wrong = client.post("/api/score", json={"dice": [1]}, headers={"X-Table-Code": "TBL7-CODX"})
        assert wrong.status_code == 401 and wrong.json()["error"] == "WrongTableCode"
        assert client.get("/api/health", params={"code": CODE}).status_code == 401  # HTTP takes the header only
        for typed in (CODE, "tbl7code", " TBL7 CODE "):  # as a person types it on a phone
            assert client.get("/api/health", headers={"X-Table-Code": typed}).status_code == 200, typed


def test_a_websocket_without_the_code_is_told_why_and_closed(tmp_path: Path) -> None:
    with client_for(tmp_path, host="0.0.0.0", table_code=CODE) as client:
        for url in ("/ws/table/-", "/ws/table/-?code=WRONG1"):
            with client.websocket_connect(url) as ws:
                answer = ws.receive_json()
                assert answer["type"] == "error" and answer["fatal"] is True and "code" in answer["detail"]
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_json()
                assert closed.value.code == 4401
        with client.websocket_connect("/ws/table/-?code=tbl7-code") as ws:
            ws.send_json({"type": "ping"})
            assert ws.receive_json() == {"type": "pong"}


def test_ten_wrong_codes_shut_an_address_out_for_a_minute(tmp_path: Path) -> None:
    with client_for(tmp_path, host="0.0.0.0", table_code=CODE) as client:
        for _ in range(3):
            assert client.get("/api/health").status_code == 401  # sending none is not guessing
        for _ in range(9):
            assert client.get("/api/health", headers={"X-Table-Code": "GUESS1"}).status_code == 401
        assert client.get("/api/health", headers={"X-Table-Code": CODE}).status_code == 200
        assert client.get("/api/health", headers={"X-Table-Code": "GUESS1"}).status_code == 401  # the tenth
        shut = client.get("/api/health", headers={"X-Table-Code": CODE})  # even the right one, for now
        assert shut.status_code == 429 and shut.json()["error"] == "TooManyWrongCodes"
        assert 0 < int(shut.headers["retry-after"]) <= 60 and "try again in" in shut.json()["detail"]
        with client.websocket_connect(f"/ws/table/-?code={CODE}") as ws:
            assert ws.receive_json()["error"] == "TooManyWrongCodes"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
            assert closed.value.code == 4429
        other = TestClient(client.app, base_url="http://10.0.0.2", client=("10.0.0.3", 5000))
        assert other.get("/api/health", headers={"X-Table-Code": CODE}).status_code == 200  # another address


def test_the_wrong_code_window_slides_and_its_table_is_bounded() -> None:
    now = [0.0]
    limit = WrongCodeLimit(attempts=3, window=60.0, clock=lambda: now[0], max_addresses=4)
    for t in (0.0, 10.0, 20.0):
        now[0] = t
        assert limit.wait("a") == 0.0
        limit.failed("a")
    assert limit.wait("a") == pytest.approx(40.0)  # until the first of the three is a minute old
    now[0] = 60.5
    assert limit.wait("a") == 0.0  # one has aged out: one more try
    limit.failed("a")
    assert limit.wait("a") == pytest.approx(9.5)
    for name in "bcdef":
        limit.failed(name)
    assert len(limit._failures) == 4 and "a" not in limit._failures  # the longest quiet address forgotten first


def test_a_code_given_on_loopback_is_required_too(tmp_path: Path) -> None:
    with client_for(tmp_path, table_code=CODE) as client:
        assert client.get("/api/session").json() == {"code_required": True}
        assert client.get("/api/health").status_code == 401


def test_every_api_route_but_the_session_needs_the_code(tmp_path: Path) -> None:
    """A route added later outside /api would be open to the network: this fails first."""
    with client_for(tmp_path, host="0.0.0.0", table_code=CODE, base_url="http://10.0.0.2") as client:
        paths = client.get("/openapi.json").json()["paths"]
        assert len(paths) > 8
        for path, methods in paths.items():
            for method in methods:
                answer = client.request(method, re.sub(r"{[^}]+}", "x", path))
                assert answer.status_code == (200 if path == "/api/session" else 401), (method, path)
        assert all(needs_code(path) for path in paths if path != "/api/session")


def test_settings_beyond_loopback_always_carry_a_code() -> None:
    first, second = Settings(host="0.0.0.0").table_code, Settings(host="192.168.1.20").table_code
    assert first and second and first != second
    assert Settings(host="0.0.0.0", table_code="my-table-1").table_code == "my-table-1"
    assert Settings().table_code is None
    assert Settings.from_env({"FARKLECAM_HOST": "0.0.0.0", "FARKLECAM_TABLE_CODE": "abc123"}).table_code == "abc123"
    assert Settings(allow_hosts=("localhost", "::1")).table_code is None
    assert Settings.from_env({"FARKLECAM_ALLOW_HOSTS": "localhost,192.168.1.20"}).table_code  # named on the network


def test_an_app_from_the_environment_logs_its_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``uvicorn --factory farklecam.service.app:create_app`` with FARKLECAM_HOST set: the log is the only place to
    read it."""
    from farklecam.service.settings import get_settings

    monkeypatch.setenv("FARKLECAM_HOST", "0.0.0.0")
    monkeypatch.setenv("FARKLECAM_DB_PATH", str(tmp_path / "g.sqlite3"))
    get_settings.cache_clear()
    try:
        app = create_app()
    finally:
        get_settings.cache_clear()
    code = app.state.settings.table_code
    assert code and f"table code: {code}" in caplog.text


@given(st.lists(st.sampled_from(CODE_ALPHABET), min_size=6, max_size=20).map("".join), st.text(max_size=30))
def test_codes_match_as_typed_and_nothing_else(code: str, other: str) -> None:
    assert validate_code(code) == code
    assert same_code(code.lower(), code) and same_code(f" {code[:3]}-{code[3:]} ", code)
    assert same_code(other, code) is (normalize_code(other) == normalize_code(code))
    assert not same_code(None, code) and not same_code(code + "2", code)


def test_generated_codes_are_valid_and_differ() -> None:
    codes = {generate_code() for _ in range(50)}
    assert len(codes) == 50
    assert all(validate_code(c) == c and len(normalize_code(c)) == 8 for c in codes)


@pytest.mark.parametrize("bad", ["12345", "x" * 65, "table code!", "tablé1"])
def test_a_chosen_code_must_be_letters_and_digits(bad: str) -> None:
    with pytest.raises(ValueError, match="6 to 64 letters and digits"):
        validate_code(bad)


# ----------------------------------------------------------------------------- TLS
def test_self_signed_pair_names_the_served_hosts_and_is_reused(tmp_path: Path) -> None:
    from cryptography import x509

    names = served_names(Settings(host="0.0.0.0"), addresses=["192.168.1.20"])
    assert {"localhost", "127.0.0.1", "::1", "192.168.1.20"} <= set(names)
    cert, key = self_signed(names, tmp_path)
    check_pair(cert, key)
    assert key.stat().st_mode & 0o077 == 0  # the key is its owner's alone
    sans = x509.load_pem_x509_certificate(cert.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert "localhost" in sans.value.get_values_for_type(x509.DNSName)
    assert {str(a) for a in sans.value.get_values_for_type(x509.IPAddress)} >= {"127.0.0.1", "192.168.1.20"}
    pem = cert.read_bytes()
    assert self_signed(names[:3], tmp_path) == (cert, key) and cert.read_bytes() == pem  # still covers them: kept
    self_signed([*names, "den.lan"], tmp_path)
    assert cert.read_bytes() != pem  # a new name: made anew


def test_a_broken_pair_is_refused_with_the_file_named(tmp_path: Path) -> None:
    cert, key = self_signed(["localhost"], tmp_path / "a")
    other_cert, _ = self_signed(["localhost"], tmp_path / "b")
    with pytest.raises(TlsError, match="does not exist"):
        check_pair(tmp_path / "none.pem", key)
    with pytest.raises(TlsError, match="cannot serve https"):
        check_pair(other_cert, key)
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(TlsError, match=r"junk\.pem"):
        check_pair(tmp_path / "junk.pem", key)
    assert cert.exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_with_a_generated_certificate_answers_over_https(tmp_path: Path) -> None:
    import uvicorn

    cert, key = self_signed(served_names(Settings()), tmp_path / "tls")
    settings = Settings(db_path=tmp_path / "g.sqlite3", tls_cert=cert, tls_key=key, table_code=CODE)
    port = free_port()
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", ssl_certfile=cert, ssl_keyfile=key
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        trust = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(verify=trust, base_url=f"https://127.0.0.1:{port}") as client:
            assert client.get("/api/session").json() == {"code_required": True}
            assert client.get("/api/health", headers={"X-Table-Code": CODE}).json()["status"] == "ok"
            assert client.get("/api/health", headers={"origin": f"https://127.0.0.1:{port}"}).status_code == 401
            assert client.get("/api/health", headers={"origin": f"http://127.0.0.1:{port}"}).status_code == 403
        with pytest.raises(httpx.ConnectError), httpx.Client() as untrusting:  # the system's authorities do not know it
            untrusting.get(f"https://127.0.0.1:{port}/api/session")
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize("table_code", [CODE, None])
def test_openapi_names_the_table_code_on_every_route_that_needs_it(tmp_path: Path, table_code: str | None) -> None:
    """A generated client learns from /openapi.json to send X-Table-Code (the middleware checks it, not a route)."""
    with client_for(tmp_path, table_code=table_code) as client:
        spec = client.get("/openapi.json").json()
    scheme = spec["components"]["securitySchemes"]["TableCode"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", CODE_HEADER)
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            security = operation.get("security")
            if path == "/api/session":
                assert security is None, (method, path)
            elif table_code is None:
                assert security == [{}, {"TableCode": []}], (method, path)
            else:
                assert security == [{"TableCode": []}], (method, path)
