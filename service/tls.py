"""https for ``farklecam serve``: check a certificate and key, or make a self-signed pair.

A phone's browser lends a page its camera only in a secure context, which on
another machine means https. ``--tls-cert/--tls-key`` take the operator's own
pair; ``--tls-self-signed`` makes one for the names the server answers to (and
this machine's LAN addresses) in the user data folder, and reuses it while it
still covers those names for at least 30 days, so a phone that accepted it once
is not asked again at every start. Browsers warn about a certificate they did
not get from an authority: the players accept it once per device.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
import ssl
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from platformdirs import user_data_dir

from farklecam.errors import FarkleError

__all__ = ["TlsError", "check_pair", "default_tls_dir", "self_signed"]

#: Days a generated certificate is valid: under the 398 days browsers accept for a server certificate.
VALID_DAYS = 397
#: A certificate expiring sooner than this is made anew instead of reused.
RENEW_BEFORE = dt.timedelta(days=30)


class TlsError(FarkleError, ValueError):
    """A certificate or key that cannot be read, does not match, or cannot be written."""


def default_tls_dir() -> Path:
    """Where ``--tls-self-signed`` keeps its pair: ``tls/`` in the user data folder."""
    return Path(user_data_dir("farklecam", appauthor=False)) / "tls"


def check_pair(cert: Path, key: Path) -> None:
    """Refuse, with a message naming the file, a certificate and key the server could not serve with.

    Raises:
        TlsError: a missing or unreadable file, not PEM, or a key that is not the certificate's.
    """
    for path, what in ((cert, "certificate"), (key, "key")):
        if not path.is_file():
            raise TlsError(f"TLS {what} {path} does not exist or is not a file")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc.strerror or type(exc).__name__
        hint = "both must be PEM, the key the certificate's"
        raise TlsError(f"cannot serve https with {cert} and {key}: {reason} ({hint})") from None


def self_signed(names: Sequence[str], folder: Path | None = None) -> tuple[Path, Path]:
    """A certificate and key for ``names`` in ``folder``: the ones already there if they still do, else new ones.

    Args:
        names: host names and IP addresses the certificate must name (its subject alternative names).
        folder: where ``cert.pem`` and ``key.pem`` live; None for :func:`default_tls_dir`.

    Returns:
        The certificate's path and the key's.

    Raises:
        TlsError: the folder cannot be written.
    """
    folder = default_tls_dir() if folder is None else folder
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    if _still_good(cert_path, key_path, names):
        return cert_path, key_path
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"farklecam on {socket.gethostname()}"[:64])])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # a phone whose clock runs a little behind
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName([_general_name(n) for n in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the key is readable by its owner only
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    except OSError as exc:
        raise TlsError(f"cannot write the self-signed certificate to {folder}: {exc.strerror}") from None
    return cert_path, key_path


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _still_good(cert_path: Path, key_path: Path, names: Sequence[str]) -> bool:
    """Whether the pair on disk matches, names every one of ``names`` and is not about to expire."""
    try:
        check_pair(cert_path, key_path)
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        covered = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (TlsError, ValueError, OSError, x509.ExtensionNotFound):
        return False
    fresh = cert.not_valid_after_utc - dt.datetime.now(dt.UTC) > RENEW_BEFORE
    return fresh and all(_general_name(n) in covered for n in names)
